/** What every kind holding a cluster at the backend shares: the backend's endpoint read as host and port. */
import { describe, expect, it } from "vitest";
import { isHibernationPhase } from "../../../../src/api/backend.ts";
import {
  apiEndpointOf,
  backendClusterPredicates,
  notServing,
} from "../../../../src/machines/backend-cluster/backend-cluster.ts";

describe("apiEndpointOf", () => {
  it.each([
    ["https://127.0.0.1:6443", { host: "127.0.0.1", port: 6443 }],
    ["https://api.example.com", { host: "api.example.com", port: 443 }],
    ["https://[::1]:8443", { host: "::1", port: 8443 }],
    ["not a url", undefined],
    [undefined, undefined],
  ])("%s → %o", (url, endpoint) => {
    expect(apiEndpointOf(url)).toEqual(endpoint);
  });
});

describe("the hibernation phases (contract 1.6)", () => {
  const sleeping = ["hibernating", "hibernated", "waking"] as const;
  it("are not serving, not ready and not failed, saying which", () => {
    for (const phase of sleeping) {
      const observation = {
        exists: true,
        phase,
        version: "1.34.2",
        message: "its nodes are stopped",
      } as const;
      expect(isHibernationPhase(observation)).toBe(true);
      expect(notServing(observation)).toBe(`${phase}: its nodes are stopped`);
      const facts = {
        deleting: false,
        hasFinalizer: true,
        foreignFinalizers: [],
        profileFound: true,
        version: { kind: "accepted", version: "1.34.2" },
        backend: observation,
      } as unknown as Parameters<typeof backendClusterPredicates.backendReady>[0];
      expect(backendClusterPredicates.backendReady(facts)).toBe(false);
      expect(backendClusterPredicates.backendFailed(facts)).toBe(false);
      expect(backendClusterPredicates.backendNeedsCreate(facts)).toBe(false); // it exists: never made again
    }
    expect(isHibernationPhase({ exists: true, phase: "ready", version: "1.34.2" })).toBe(false);
    expect(isHibernationPhase({ exists: false })).toBe(false);
  });
});
