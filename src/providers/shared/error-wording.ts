/** How backends word what failed, for a person to act on and never with a secret: one line, the cluster by name. */
import type { ClusterTarget } from "../../api/backend.ts";
import { apiStatusOf, errorMessage } from "../../api/error-message.ts";

/** `cluster <namespace>/<name>`: a Cluster as messages name it. */
export function describeCluster(target: Pick<ClusterTarget, "namespace" | "name">): string {
  return `cluster ${target.namespace}/${target.name}`;
}

/**
 * The first line of an error's message, at most 200 characters, and the code of the failed request's cause
 * (`ECONNREFUSED`) when it has one: what a person needs, never a dumped response.
 */
export function errorLine(error: unknown): string {
  const cause = (error as { cause?: { code?: string } })?.cause;
  const line = errorMessage(error).split("\n")[0] ?? "";
  return `${line.length > 200 ? `${line.slice(0, 200)}…` : line}${cause?.code ? ` (${cause.code})` : ""}`;
}

/** Who answered a remote call, for {@link remoteCallError}. */
export interface RemoteParty {
  /** Who refuses, as a sentence begins: `Gardener`, `the management cluster`. */
  readonly refuser: string;
  /** Where it is, for when it does not answer: `garden at https://…`. */
  readonly place: string;
}

/**
 * An error of a call to a remote API server while doing `what`: its own message when it answered (its validation
 * and admission say what is wrong), else that it did not answer.
 */
export function remoteCallError(party: RemoteParty, what: string, error: unknown): Error {
  const status = apiStatusOf(error);
  if (status?.message)
    return new Error(`${party.refuser} refused ${what}: ${status.message}`, { cause: error });
  if (status) return new Error(`${party.refuser} refused ${what}: HTTP ${status.code}`, { cause: error });
  return new Error(`${party.place} unreachable while ${what}: ${errorLine(error)}`, { cause: error });
}
