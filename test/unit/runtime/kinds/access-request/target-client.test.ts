/** One target client per admin access the engine holds, so that its requests share their connections (no network). */
import { describe, expect, it } from "vitest";
import type { AdminAccess } from "../../../../../src/api/backend-contract.ts";
import { targetClient } from "../../../../../src/runtime/kinds/access-request/target-client.ts";

const kubeconfig = (server: string) => `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: "${server}" } }]
users: [{ name: u, user: { token: t } }]
contexts: [{ name: x, context: { cluster: c, user: u } }]
current-context: x
`;

describe("targetClient", () => {
  it("is the same client for the same admin access, and a new one for a new access (rotated, or read again after a 401)", () => {
    const access: AdminAccess = { kubeconfig: kubeconfig("https://127.0.0.1:6443") };
    const client = targetClient(access);
    expect(targetClient(access)).toBe(client);
    expect(client.server).toBe("https://127.0.0.1:6443");
    const rotated: AdminAccess = { kubeconfig: kubeconfig("https://127.0.0.1:6443") };
    expect(targetClient(rotated)).not.toBe(client);
  });
});
