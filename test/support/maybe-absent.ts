/** Objects that may not exist: a read answers undefined on 404, a write replaces or creates; any other failure fails. */

import type { CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { absentIfNotFound, isNotFound } from "../../src/api/error-message.ts";

/** A custom resource's coordinates, as RESOURCES and the CAPI constants give them. */
export interface CustomResource {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}

/** What `reading` resolves to; undefined where the API server answered 404. */
export const orAbsent = <T>(reading: Promise<T>): Promise<T | undefined> => absentIfNotFound(() => reading);

/** The custom object `namespace/name` of `resource`, or undefined where there is none. */
export const readCustomObject = <T>(
  custom: CustomObjectsApi,
  resource: CustomResource,
  namespace: string,
  name: string,
): Promise<T | undefined> =>
  orAbsent(custom.getNamespacedCustomObject({ ...resource, namespace, name }) as Promise<T>);

/** Writes the Secret `namespace/name` holding `stringData`: replaced where it exists, created where it does not. */
export async function writeSecret(
  core: CoreV1Api,
  namespace: string,
  name: string,
  stringData: Record<string, string>,
): Promise<void> {
  const body = { metadata: { name }, stringData };
  try {
    await core.replaceNamespacedSecret({ namespace, name, body });
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await core.createNamespacedSecret({ namespace, body });
  }
}
