/**
 * `openmcp-engine move --from <kubeconfig> --to <kubeconfig>`: the command line of the library's move
 * (runtime/move/move-objects.ts): its flags, progress lines and exit code.
 */
import { parseArgs } from "node:util";
import { PAUSED_ANNOTATION } from "../api/move.ts";
import { loadKubeConfig } from "../runtime/api-server/load-kubeconfig.ts";
import { moveObjects } from "../runtime/move/move-objects.ts";
import { UsageError } from "./usage-error.ts";

/** The help text of `move`. */
export const moveUsage = `Usage: openmcp-engine move --from <kubeconfig> --to <kubeconfig> [flags]

Moves Clusters, their ProviderConfigs, ClusterRequests, ClusterRequestGrants and AccessRequests, with
their Secrets and status, from one management cluster to another, as Cluster API's 'clusterctl move':
pause them on the source (${PAUSED_ANNOTATION}), wait for the source's engine to hand each Cluster's
backend state over, copy everything with its status, resume it on the target, remove it from the source
(finalizers stripped, so the source's engine does nothing at the backend). No cluster is created or
deleted at the backend, and access granted stays valid. Both management clusters need the CRDs and an
engine of the same provider name and environment. Run it again after a failure: it goes on where it
stopped. A Cluster whose backend cannot hand its clusters over stays where it is (with what uses it).

Flags:
  --from <path>          kubeconfig of the source management cluster
  --to <path>            kubeconfig of the target management cluster
  --namespace <ns>       move only this namespace's objects (repeatable; default: every namespace)
  --timeout <seconds>    how long to wait for hand-overs and the target's profiles (default: 120)
  -h, --help             show this help

Example: openmcp-engine move --from bootstrap.kubeconfig --to platform.kubeconfig --namespace team-a`;

/** Runs `move` from the command line. */
export async function move(args: string[]): Promise<void> {
  const options = {
    from: { type: "string" },
    to: { type: "string" },
    namespace: { type: "string", multiple: true },
    timeout: { type: "string" },
  } as const;
  let parsed: ReturnType<typeof parseArgs<{ options: typeof options }>>;
  try {
    parsed = parseArgs({ args, options, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message, moveUsage);
  }
  const { from, to, namespace = [], timeout = "120" } = parsed.values;
  if (!from || !to) throw new UsageError("move needs --from and --to", moveUsage);
  const seconds = Number(timeout);
  if (!(seconds > 0))
    throw new UsageError(`--timeout "${timeout}" must be a positive number of seconds`, moveUsage);
  const report = await moveObjects({
    from: loadKubeConfig(from).kubeConfig,
    to: loadKubeConfig(to).kubeConfig,
    namespaces: namespace,
    timeoutMs: seconds * 1_000,
    log: (line) => console.log(line),
  });
  const counts = Object.entries(report.moved)
    .map(([kind, count]) => `${count} ${kind}`)
    .join(", ");
  console.log(`moved: ${counts}`);
  for (const { cluster, reason } of report.refused)
    console.log(`left on the source: Cluster ${cluster}: ${reason}`);
  if (report.refused.length > 0) process.exitCode = 1;
}
