/** Server-side apply, as the engine writes the objects it owns whole (CRDs, policies, RBAC on targets). */
import { type KubernetesObject, type KubernetesObjectApi, PatchStrategy } from "@kubernetes/client-node";

/** The field manager of the engine's writes. */
export const FIELD_MANAGER = "openmcp-engine";

/** Applies `object`, taking over its fields as `fieldManager` (forced: what it names is the writer's own). */
export function serverSideApply(
  objects: KubernetesObjectApi,
  object: KubernetesObject,
  fieldManager: string = FIELD_MANAGER,
): Promise<KubernetesObject> {
  return objects.patch(object, undefined, undefined, fieldManager, true, PatchStrategy.ServerSideApply);
}
