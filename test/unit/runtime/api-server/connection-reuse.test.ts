/**
 * Requests through one KubeConfig share one dispatcher per server and TLS material, retired once idle.
 * No network, but for one plain HTTP server on the loopback standing in for an API server holding a request.
 */
import { once } from "node:events";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { CoreV1Api, KubeConfig, RequestContext } from "@kubernetes/client-node";
import { afterEach, describe, expect, it, vi } from "vitest";
import { IDLE_RETIREMENT_MS, reuseConnections } from "../../../../src/runtime/api-server/connection-reuse.ts";

const CA = Buffer.from("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n").toString("base64");

function config(server: string, user = "admin"): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    // client-node speaks plain HTTP only when told to skip TLS verification.
    clusters: [
      server.startsWith("http:")
        ? { name: "c", server, skipTLSVerify: true }
        : { name: "c", server, caData: CA },
    ],
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

  describe("retiring a dispatcher left idle, before kube-apiserver's 90 s HTTP/2 idle GOAWAY", () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it("closes it once nothing went through it for the retirement time, and hands out a new one", async () => {
      vi.useFakeTimers({ toFake: ["performance"] });
      const kubeConfig = reuseConnections(config("https://127.0.0.1:6443"));
      const first = (await dispatcherOf(kubeConfig)).dispatcher as { closed?: boolean };
      vi.advanceTimersByTime(IDLE_RETIREMENT_MS - 1_000);
      expect((await dispatcherOf(kubeConfig)).dispatcher).toBe(first); // handed out: the idle time starts again
      vi.advanceTimersByTime(IDLE_RETIREMENT_MS - 1_000);
      expect((await dispatcherOf(kubeConfig)).dispatcher).toBe(first);
      vi.advanceTimersByTime(IDLE_RETIREMENT_MS);
      const second = (await dispatcherOf(kubeConfig)).dispatcher;
      expect(second).not.toBe(first);
      expect(first.closed).toBe(true);
      expect((await dispatcherOf(kubeConfig)).dispatcher).toBe(second);
    });

    it("keeps it while a request is in flight, and counts idle time from when the request ended", async () => {
      const held: ServerResponse[] = [];
      const server = createServer((_, response) => held.push(response));
      server.listen(0, "127.0.0.1");
      await once(server, "listening");
      try {
        vi.useFakeTimers({ toFake: ["performance"] });
        const { port } = server.address() as AddressInfo;
        const kubeConfig = reuseConnections(config(`http://127.0.0.1:${port}`));
        const first = (await dispatcherOf(kubeConfig)).dispatcher;
        const listing = kubeConfig.makeApiClient(CoreV1Api).listNamespace();
        await vi.waitFor(() => expect(held).toHaveLength(1));
        vi.advanceTimersByTime(2 * IDLE_RETIREMENT_MS);
        expect((await dispatcherOf(kubeConfig)).dispatcher).toBe(first); // a long request (a watch) is no idle time
        held[0]
          ?.writeHead(200, { "content-type": "application/json" })
          .end('{"kind":"NamespaceList","items":[]}');
        expect((await listing).items).toEqual([]);
        vi.advanceTimersByTime(IDLE_RETIREMENT_MS - 1_000);
        expect((await dispatcherOf(kubeConfig)).dispatcher).toBe(first);
        vi.advanceTimersByTime(IDLE_RETIREMENT_MS);
        expect((await dispatcherOf(kubeConfig)).dispatcher).not.toBe(first);
      } finally {
        server.closeAllConnections();
        server.close();
      }
    });
  });
});
