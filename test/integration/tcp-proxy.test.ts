/** The partition proxy on a real API server: requests pass through it, block() cuts them off, unblock() heals. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { connect as connectTls, type TLSSocket } from "node:tls";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";
import { eventually } from "../support/eventually.ts";
import { writeKubeconfigThroughProxy } from "../support/proxied-kubeconfig.ts";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.ts";

const folder = mkdtempSync(join(tmpdir(), "tcp-proxy-"));
let controlPlane: ControlPlane;
let proxy: TcpProxy;
let throughProxy: CoreV1Api;
let direct: CoreV1Api;

beforeAll(async () => {
  controlPlane = await startControlPlane();
  const server = new URL(controlPlane.server);
  proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port) });
  const kubeconfig = writeKubeconfigThroughProxy(
    controlPlane.kubeconfigPath,
    proxy,
    join(folder, "kubeconfig"),
  );
  const viaProxy = new KubeConfig();
  viaProxy.loadFromFile(kubeconfig);
  throughProxy = viaProxy.makeApiClient(CoreV1Api);
  direct = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
});

afterAll(async () => {
  await proxy?.stop();
  await controlPlane?.stop();
  rmSync(folder, { recursive: true, force: true });
});

/** What became of `request` within `ms`: answered, failed, or still no answer. */
function outcomeWithin(request: Promise<unknown>, ms: number): Promise<string> {
  return Promise.race([
    request.then(
      () => "answered",
      () => "failed",
    ),
    sleep(ms).then(() => "no answer"),
  ]);
}

/** A TLS connection to the API server through the proxy, checking its certificate against the control plane's CA. */
function tlsThroughProxy(): TLSSocket {
  const ca = Buffer.from(controlPlane.kubeConfig.getCurrentCluster()?.caData ?? "", "base64");
  const socket = connectTls({ host: "127.0.0.1", port: proxy.port, ca });
  socket.on("error", () => {}); // block() and unblock() close it on purpose
  return socket;
}

const closed = (socket: TLSSocket) => new Promise((resolve) => socket.once("close", resolve));
const handshaken = (socket: TLSSocket) =>
  new Promise<string>((resolve) => {
    socket.once("secureConnect", () => resolve("handshaken"));
    socket.once("close", () => resolve("closed"));
  });

describe("a TCP proxy in front of the API server", () => {
  it("passes requests through, with the API server's certificate valid for the proxy's address", async () => {
    const namespaces = await throughProxy.listNamespace();
    expect(namespaces.items.map((ns) => ns.metadata?.name)).toContain("default");
    const socket = tlsThroughProxy();
    expect(await handshaken(socket)).toBe("handshaken");
    expect(socket.authorized).toBe(true);
    socket.destroy();
  });

  it("after block() closes open connections, holds new ones without an answer, and leaves direct clients alone", async () => {
    const open = tlsThroughProxy();
    expect(await handshaken(open)).toBe("handshaken");
    const openClosed = closed(open);
    proxy.block();
    try {
      await openClosed; // a connection that was open is cut at once

      const fresh = tlsThroughProxy();
      expect(await outcomeWithin(handshaken(fresh), 1_000)).toBe("no answer");
      expect(await outcomeWithin(throughProxy.listNamespace(), 2_000)).not.toBe("answered");
      expect((await direct.listNamespace()).items.length).toBeGreaterThan(0);

      const freshClosed = closed(fresh);
      proxy.unblock();
      await freshClosed; // held connections end with the partition, so their clients retry
    } finally {
      proxy.unblock();
    }
  });

  it("after unblock() ends the requests held meanwhile and passes new ones through", async () => {
    proxy.block();
    const held = throughProxy.listNamespace();
    expect(await outcomeWithin(held, 1_000)).toBe("no answer");
    proxy.unblock();
    expect(await outcomeWithin(held, 5_000)).toBe("failed"); // not left hanging: its client may retry
    const namespaces = await eventually(() => throughProxy.listNamespace(), {
      what: "a request through the healed proxy",
      timeoutMs: 10_000,
    });
    expect(namespaces.items.map((ns) => ns.metadata?.name)).toContain("default");
  });
});
