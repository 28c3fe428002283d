/** AccessRequests in tests: creating one on the API server, and waiting until it is Granted. */

import type { CustomObjectsApi } from "@kubernetes/client-node";
import type { AccessRequest, AccessRequestSpec } from "../../src/api/access-request.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { anAccessRequest } from "./builders.ts";
import { type EventuallyOptions, eventually, satisfying } from "./eventually.ts";
import { readCustomObject } from "./maybe-absent.ts";

/** Creates the AccessRequest `namespace/name` asking for `spec`. */
export async function createAccessRequest(
  custom: CustomObjectsApi,
  namespace: string,
  name: string,
  spec: AccessRequestSpec,
): Promise<void> {
  await custom.createNamespacedCustomObject({
    ...RESOURCES.AccessRequest,
    namespace,
    body: anAccessRequest({ ...spec, name, namespace }),
  });
}

export const isGranted = (request: AccessRequest | undefined): boolean =>
  request?.status?.phase === "Granted";

/** Waits until the AccessRequest `namespace/name` is Granted and resolves to it; a failure shows the last one read. */
export async function accessGranted(
  custom: CustomObjectsApi,
  namespace: string,
  name: string,
  options: EventuallyOptions = {},
): Promise<AccessRequest> {
  const request = await eventually(
    async () =>
      satisfying(
        await readCustomObject<AccessRequest>(custom, RESOURCES.AccessRequest, namespace, name),
        isGranted,
      ),
    { what: `AccessRequest ${namespace}/${name} Granted`, ...options },
  );
  return request as AccessRequest;
}
