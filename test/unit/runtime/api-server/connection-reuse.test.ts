/** Requests through one KubeConfig share one dispatcher per server and TLS material (pure: no network). */
import { KubeConfig, RequestContext } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { reuseConnections } from "../../../../src/runtime/api-server/connection-reuse.ts";

const CA = Buffer.from("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n").toString("base64");

function config(server: string, user = "admin"): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: "c", server, caData: CA }],
    users: [{ name: user, token: `token-of-${user}` }],
    contexts: [{ name: "x", cluster: "c", user }],
    currentContext: "x",
  });
  return kubeConfig;
}

async function dispatcherOf(kubeConfig: KubeConfig, path = "/api") {
  const context = new RequestContext(`${kubeConfig.getCurrentCluster()?.server}${path}`, "GET" as never);
  await kubeConfig.applySecurityAuthentication(context);
  return { dispatcher: context.getDispatcher(), authorization: context.getHeaders().Authorization };
}

describe("reuseConnections", () => {
  it("gives every request the same dispatcher, and keeps setting the credentials per request", async () => {
    const kubeConfig = reuseConnections(config("https://127.0.0.1:6443"));
    const first = await dispatcherOf(kubeConfig);
    const second = await dispatcherOf(kubeConfig, "/apis");
    expect(first.dispatcher).toBeDefined();
    expect(second.dispatcher).toBe(first.dispatcher);
    expect(second.authorization).toBe("Bearer token-of-admin");
  });

  it("without it, client-node makes a new dispatcher (a new TLS connection) per request", async () => {
    const kubeConfig = config("https://127.0.0.1:6443");
    expect((await dispatcherOf(kubeConfig)).dispatcher).not.toBe((await dispatcherOf(kubeConfig)).dispatcher);
  });

  it("keeps servers apart", async () => {
    const a = reuseConnections(config("https://127.0.0.1:6443"));
    const b = reuseConnections(config("https://127.0.0.1:7443"));
    expect((await dispatcherOf(a)).dispatcher).not.toBe((await dispatcherOf(b)).dispatcher);
    expect(reuseConnections(a)).toBe(a); // idempotent
  });
});
