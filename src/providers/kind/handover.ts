/**
 * A kind cluster moved between engines (backend contract 1.5): its folder as hand-over entries, with the pool
 * member it is bound to, if any; and those entries taken over on the other side.
 */
import type { ClusterTarget } from "../../api/backend.ts";
import type { PoolMemberSpec } from "../../api/backend-contract.ts";
import { describeCluster } from "../shared/error-wording.ts";
import type { PoolLedger } from "../shared/pool-ledger.ts";
import { exportStateFolder, importStateFolder } from "../shared/state-folder-handover.ts";
import type { CreateState } from "./create-lifecycle.ts";
import type { KindRecord } from "./state-folder.ts";

/** The hand-over entry that carries a bound Cluster's pool member (not a file of the cluster's folder). */
const POOL_MEMBER_ENTRY = "pool-member.json";

/**
 * The entries of the cluster's `folder`: its record, create status, kind config and OIDC trust. A create still
 * running (or queued) is refused: its process writes here, on this host only.
 */
export function exportKindCluster(
  target: ClusterTarget,
  cluster: string,
  folder: string,
  create: CreateState,
  ledger: PoolLedger,
): Record<string, string> {
  if (create.kind === "running" || create.kind === "queued")
    throw new Error(
      `kind cluster ${cluster} of ${describeCluster(target)} is still being created: move it once it is Ready`,
    );
  const entries = exportStateFolder(folder);
  // A Cluster bound to a pool member: its binding travels too, or the other engine would look for the uid's own cluster.
  const member = ledger.member(ledger.keyOf(target.uid));
  return member ? { ...entries, [POOL_MEMBER_ENTRY]: JSON.stringify(member) } : entries;
}

/** Binds the target to the pool member the entries carry, if any; the rest is the cluster's folder. */
export function importPoolMember(
  target: ClusterTarget,
  entries: Readonly<Record<string, string>>,
  ledger: PoolLedger,
): Readonly<Record<string, string>> {
  const { [POOL_MEMBER_ENTRY]: member, ...state } = entries;
  if (member !== undefined) {
    const spec = JSON.parse(member) as PoolMemberSpec;
    ledger.addMember(spec);
    ledger.bind(target.uid, spec.id);
  }
  return state;
}

/** Takes over the folder entries of kind cluster `cluster` into `folder`; files already there stay. */
export function importKindCluster(
  target: ClusterTarget,
  cluster: string,
  folder: string,
  state: Readonly<Record<string, string>>,
): void {
  const handed = state["record.json"];
  if (handed === undefined) return;
  if ((JSON.parse(handed) as KindRecord).cluster !== cluster)
    throw new Error(
      `kind backend: the state handed over is of another cluster than ${describeCluster(target)} (${cluster})`,
    );
  importStateFolder(folder, state);
}
