/**
 * A pool as its ProviderConfig shows it (`status.pools.<name>`), so whoever reads the configuration sees its warm
 * pools without a second command. Pure: from the pool's status to the ProviderConfig's status desired.
 */
import type { ClusterPoolStatus } from "../../api/cluster-pool.ts";
import type { ProviderConfigPool, ProviderConfigStatus } from "../../api/provider-config.ts";
import { POOL_CONDITIONS } from "./plan.ts";

/** The summary of a pool's status: counts, Ready, and the message a person must act on, if any. */
export function poolSummary(status: ClusterPoolStatus | undefined): ProviderConfigPool {
  const condition = (type: string) => status?.conditions?.find((c) => c.type === type);
  const ready = condition(POOL_CONDITIONS.ready);
  const refilled = condition(POOL_CONDITIONS.refilled);
  const message =
    refilled?.status === "False" ? refilled.message : ready?.status === "True" ? undefined : ready?.message;
  return {
    idle: status?.idle ?? 0,
    binding: status?.binding ?? 0,
    refilling: status?.refilling ?? 0,
    // A sleeping pool's, counted as one: what a reader of the configuration needs is how many do not serve at once.
    ...(status?.asleep === undefined
      ? {}
      : { asleep: status.asleep + (status.hibernating ?? 0) + (status.waking ?? 0) }),
    ready: ready?.status === "True",
    ...(message ? { message } : {}),
  };
}

/** The ProviderConfig's status with pool `name` shown as `summary`, or left out when the pool is gone (undefined). */
export function withPoolSummary(
  status: ProviderConfigStatus | undefined,
  name: string,
  summary: ProviderConfigPool | undefined,
): ProviderConfigStatus {
  const { [name]: _, ...others } = status?.pools ?? {};
  const pools = summary ? { ...others, [name]: summary } : others;
  const { pools: __, ...rest } = status ?? {};
  return Object.keys(pools).length > 0 ? { ...rest, pools } : rest;
}
