/**
 * A backend module for the engine's image (`--backend /backend/journaling-backend.mjs`, mounted from a
 * ConfigMap): the image's built-in simulated backend with every call journaled, so a test outside the
 * cluster can tell which Pod called the backend about which cluster, and when. JavaScript, not TypeScript:
 * the image runs compiled JavaScript and holds no test code.
 *
 * Options: `journal=<folder>` (required; one file per Pod, `<POD_NAME>.jsonl`, lines appended synchronously
 * so they survive the Pod's death); every other `--backend-option` goes to the simulated backend. Pods that
 * share the state folder (a hostPath) share one set of simulated clusters, as real infrastructure would be
 * shared.
 */
import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import * as simulated from "/app/dist/providers/simulated.js";

export const contractVersion = simulated.contractVersion;

export async function createBackend(context) {
  const { journal, ...options } = context.options;
  if (!journal) throw new Error("journaling backend: --backend-option journal=<folder> is required");
  mkdirSync(journal, { recursive: true });
  const pod = process.env.POD_NAME ?? `pid-${process.pid}`;
  const file = join(journal, `${pod}.jsonl`);
  const inner = await simulated.createBackend({ ...context, options });
  const write = (entry) => appendFileSync(file, `${JSON.stringify({ pod, at: Date.now(), ...entry })}\n`);
  const journaled =
    (method) =>
    async (target, ...rest) => {
      write({ method, cluster: target.uid, name: `${target.namespace}/${target.name}`, phase: "start" });
      try {
        const result = await inner[method](target, ...rest);
        write({ method, cluster: target.uid, phase: "end", ok: true });
        return result;
      } catch (error) {
        write({
          method,
          cluster: target.uid,
          phase: "end",
          ok: false,
          error: String(error?.message ?? error),
        });
        throw error;
      }
    };
  return {
    name: inner.name,
    capabilities: inner.capabilities,
    supportedVersions: (config) => inner.supportedVersions(config),
    traits: (config) => inner.traits(config),
    observe: (target) => inner.observe(target),
    create: journaled("create"),
    update: journaled("update"),
    delete: journaled("delete"),
    adminAccess: (target) => inner.adminAccess(target),
    ...(inner.close ? { close: () => inner.close() } : {}),
  };
}
