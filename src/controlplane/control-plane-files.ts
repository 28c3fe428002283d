/** The certificate files in a control plane's folder, and the admin kubeconfig made from them. */
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { stringify } from "yaml";
import { writeFileAtomically } from "../util/atomic-file.ts";
import type { ControlPlaneCertificates } from "./certificates.ts";

/** File name in the control plane's folder of each certificate or key; keys are readable by the owner only. */
const certificateFiles: Readonly<Record<keyof ControlPlaneCertificates, { name: string; secret: boolean }>> =
  {
    caCert: { name: "ca.crt", secret: false },
    servingCert: { name: "apiserver.crt", secret: false },
    servingKey: { name: "apiserver.key", secret: true },
    clientCert: { name: "admin.crt", secret: false },
    clientKey: { name: "admin.key", secret: true },
    serviceAccountKey: { name: "sa.key", secret: true },
    serviceAccountPublicKey: { name: "sa.pub", secret: false },
  };

/** Paths of the files kube-apiserver reads. */
export function certificatePaths(
  directory: string,
): Readonly<Record<keyof ControlPlaneCertificates, string>> {
  const entries = Object.entries(certificateFiles).map(([key, file]) => [key, join(directory, file.name)]);
  return Object.fromEntries(entries) as Record<keyof ControlPlaneCertificates, string>;
}

/**
 * Writes every certificate and key into `directory`: the files of an earlier set removed first, then each new
 * one whole (atomically). So a kill -9 midway leaves an incomplete set, which {@link readCertificates} reads
 * as none (and a start makes anew), never a set with an empty file or files of two sets, which kube-apiserver
 * would refuse at every start.
 */
export async function writeCertificates(directory: string, certs: ControlPlaneCertificates): Promise<void> {
  const paths = certificatePaths(directory);
  await Promise.all(Object.values(paths).map((path) => rm(path, { force: true })));
  await Promise.all(
    Object.entries(certificateFiles).map(([key, file]) =>
      writeFileAtomically(
        paths[key as keyof ControlPlaneCertificates],
        certs[key as keyof ControlPlaneCertificates],
        { mode: file.secret ? 0o600 : 0o644 },
      ),
    ),
  );
}

/** Reads the certificates {@link writeCertificates} wrote; `undefined` if any file is missing. */
export async function readCertificates(directory: string): Promise<ControlPlaneCertificates | undefined> {
  const paths = certificatePaths(directory);
  try {
    const entries = await Promise.all(
      Object.entries(paths).map(async ([key, path]) => [key, await readFile(path, "utf8")] as const),
    );
    return Object.fromEntries(entries) as unknown as ControlPlaneCertificates;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** Admin access (`system:masters`, the client certificate) to the API server at `server`. */
export function adminKubeConfig(server: string, certs: ControlPlaneCertificates): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: "local", server, caData: base64(certs.caCert) }],
    users: [{ name: "admin", certData: base64(certs.clientCert), keyData: base64(certs.clientKey) }],
    contexts: [{ name: "local", cluster: "local", user: "admin" }],
    currentContext: "local",
  });
  return kubeConfig;
}

/** A kubeconfig file's text (YAML) for the given config. */
export function kubeconfigYaml(kubeConfig: KubeConfig): string {
  return stringify(JSON.parse(kubeConfig.exportConfig()));
}

function base64(text: string): string {
  return Buffer.from(text).toString("base64");
}
