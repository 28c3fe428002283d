/** The Events the engine recorded about an object of a world's namespace. */
import { CoreV1Api } from "@kubernetes/client-node";
import type { World } from "./world.ts";

/** The Events about object `name` of the world's namespace, as one text (to look for a reason or a word in). */
export async function eventsAbout(
  world: Pick<World, "controlPlane" | "namespace">,
  name: string,
): Promise<string> {
  const events = await world.controlPlane.kubeConfig.makeApiClient(CoreV1Api).listNamespacedEvent({
    namespace: world.namespace,
    fieldSelector: `involvedObject.name=${name}`,
  });
  return JSON.stringify(events.items);
}
