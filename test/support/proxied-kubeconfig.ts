/**
 * A copy of a kubeconfig whose API server is reached through a proxy on 127.0.0.1 (see tcp-proxy.ts), so one
 * process can be partitioned from the API server. The local control plane's certificate names 127.0.0.1 and
 * localhost (src/controlplane/certificates.ts) and no port, so TLS still verifies through the proxy.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { parse, stringify } from "yaml";

interface KubeconfigFile {
  clusters?: Array<{ cluster?: { server?: string } }>;
}

/**
 * Writes `source` to `destination` with every cluster's server changed to `https://127.0.0.1:<proxy.port>`
 * (scheme and path kept), and returns `destination`.
 */
export function writeKubeconfigThroughProxy(
  source: string,
  proxy: { readonly port: number },
  destination: string,
): string {
  const config = parse(readFileSync(source, "utf8")) as KubeconfigFile;
  for (const entry of config.clusters ?? []) {
    if (entry.cluster?.server === undefined) continue;
    const server = new URL(entry.cluster.server);
    server.hostname = "127.0.0.1";
    server.port = String(proxy.port);
    entry.cluster.server = server.href.replace(/\/$/, "");
  }
  writeFileSync(destination, stringify(config), { mode: 0o600 });
  return destination;
}
