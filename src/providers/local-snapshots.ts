/**
 * The `local` backend's snapshots (contract 1.7), file by file: what one holds (etcd's snapshot, the certificate and
 * key files), the checks before a snapshot is restored, the swap of a cluster's etcd data, and a clone's folder made
 * whole from a snapshot, and a snapshot taken. The backend itself decides when (marks, stopping and starting processes).
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import type { ClusterTarget } from "../api/backend.ts";
import type { SnapshotManifest, SnapshotReference } from "../api/control-plane-snapshot.ts";
import type { ControlPlaneCertificates } from "../controlplane/certificates.ts";
import {
  certificatePaths,
  readCertificates,
  writeCertificates,
} from "../controlplane/control-plane-files.ts";
import { etcdSnapshotStream, restoreEtcdSnapshot } from "../controlplane/etcd-snapshot.ts";
import { inspectPersistentControlPlane } from "../controlplane/persistent-control-plane.ts";
import type { SnapshotFiles, StoredSnapshot } from "./shared/folder-snapshots.ts";
import { describeSnapshot, foreignSnapshot, writeSnapshot } from "./shared/snapshot-store.ts";

/** etcd's snapshot in a local cluster's snapshot, beside the certificate files (named as in the cluster's folder). */
const ETCD_SNAPSHOT_FILE = "etcd.db";
/** In a clone's folder: the issuers (the original's URL) whose service-account tokens its API server accepts too. */
const ACCEPTED_ISSUERS_FILE = "accepted-issuers";
/** In a clone's folder: the snapshot it was made from. */
const ORIGIN_FILE = "restored-from";
/** etcd's single member, as the control plane starts it (no `--name`). */
const ETCD_MEMBER = "default";

/** `v1.36.3` (as the binary says) → `1.36.3`. */
export function bareVersion(version: string | undefined): string | undefined {
  return version?.match(/\d+\.\d+\.\d+/)?.[0];
}

/**
 * Takes a snapshot of the ready cluster in `directory` into `reference` (see {@link localSnapshotFiles}); refuses one
 * that does not exist or does not serve (asleep, starting or stopped: a snapshot needs its etcd running).
 */
export async function takeLocalSnapshot(
  directory: string,
  reference: SnapshotReference,
  props: {
    readonly backend: string;
    readonly target: ClusterTarget;
    /** The backend's version, for a cluster whose record names none. */
    readonly version: string;
    readonly takenAtMs: number;
    /** Where a snapshot kept in an object store is made before its upload. */
    readonly staging: string;
  },
): Promise<SnapshotManifest> {
  const { target } = props;
  const status = await inspectPersistentControlPlane(directory);
  if (!status.exists)
    throw new Error(`local backend: cluster ${target.namespace}/${target.name} does not exist`);
  const certificates = await readCertificates(directory);
  if (!status.healthy || !status.record || !certificates)
    throw new Error(
      `local backend: cluster ${target.namespace}/${target.name} does not serve (asleep, starting or stopped): a snapshot needs its etcd running`,
    );
  const description = describeSnapshot(props.backend, target, {
    endpoint: status.server,
    kubernetesVersion: bareVersion(status.record.kubernetesVersion) ?? props.version,
    takenAtMs: props.takenAtMs,
  });
  const etcd = `http://127.0.0.1:${status.record.ports.etcd}`;
  return writeSnapshot(
    reference,
    description,
    localSnapshotFiles(directory, etcd, certificates),
    props.staging,
  );
}

/**
 * The files of a snapshot of the running cluster in `directory` (for `writeSnapshot`): etcd's consistent snapshot
 * from `etcdUrl` (its HTTP gateway) and every certificate and key file.
 */
export function localSnapshotFiles(
  directory: string,
  etcdUrl: string,
  certificates: ControlPlaneCertificates,
): SnapshotFiles {
  return async (add) => {
    await add(ETCD_SNAPSHOT_FILE, etcdSnapshotStream(etcdUrl));
    for (const [key, path] of Object.entries(certificatePaths(directory)))
      await add(basename(path), certificates[key as keyof ControlPlaneCertificates]);
  };
}

/** Refuses (`ForeignSnapshot`) a snapshot whose CA or service-account key is not that of the cluster in `directory`. */
export async function requireOwnKeys(directory: string, stored: StoredSnapshot): Promise<void> {
  const own = await readCertificates(directory);
  const files = certificatePaths(directory);
  const theirs = (path: string) => readFile(stored.path(basename(path)), "utf8").catch(() => undefined);
  if (
    own &&
    own.caCert === (await theirs(files.caCert)) &&
    own.serviceAccountKey === (await theirs(files.serviceAccountKey))
  )
    return;
  throw foreignSnapshot(stored);
}

/**
 * Replaces the etcd data of the (stopped) cluster in `directory` with the snapshot's, restored by `etcdutl` for the
 * member at `peerUrl`: made beside it, then swapped in. A crash midway leaves the old data, or none; a call again
 * redoes it (the caller's mark keeps the cluster stopped meanwhile).
 */
export async function swapInSnapshotData(
  directory: string,
  stored: StoredSnapshot,
  etcdutl: string,
  peerUrl: string,
): Promise<void> {
  const fresh = join(directory, "etcd.restoring");
  const old = join(directory, "etcd.before-restore");
  const data = join(directory, "etcd");
  await rm(fresh, { recursive: true, force: true });
  await restoreEtcdSnapshot(etcdutl, stored.path(ETCD_SNAPSHOT_FILE), fresh, { name: ETCD_MEMBER, peerUrl });
  await rm(old, { recursive: true, force: true });
  if (existsSync(data)) await rename(data, old);
  await rename(fresh, data);
  await rm(old, { recursive: true, force: true });
}

/**
 * Makes `destination` (which must not exist) a cluster folder from the snapshot (a clone): its certificates and keys,
 * its etcd data restored by `etcdutl`, and the original's endpoint as an issuer the clone's API server accepts beside
 * its own, so service-account tokens of the original verify. Made in `seeding` and renamed into place whole, so a
 * crash leaves no half-made cluster.
 */
export async function seedClusterFolder(
  stored: StoredSnapshot,
  seeding: string,
  destination: string,
  etcdutl: string,
): Promise<void> {
  await mkdir(seeding, { recursive: true });
  const folder = await mkdtemp(join(seeding, `${basename(destination)}-`));
  try {
    const entries = await Promise.all(
      Object.entries(certificatePaths(folder)).map(
        async ([name, path]) => [name, await readFile(stored.path(basename(path)), "utf8")] as const,
      ),
    );
    await writeCertificates(folder, Object.fromEntries(entries) as unknown as ControlPlaneCertificates);
    // The member's peer URL is a placeholder: a single member, started on ports chosen then (as after any restart).
    await restoreEtcdSnapshot(etcdutl, stored.path(ETCD_SNAPSHOT_FILE), join(folder, "etcd"), {
      name: ETCD_MEMBER,
      peerUrl: "http://127.0.0.1:2380",
    });
    const original = stored.manifest.cluster.endpoint;
    if (original) await writeFile(join(folder, ACCEPTED_ISSUERS_FILE), `${original}\n`);
    await writeFile(join(folder, ORIGIN_FILE), `${basename(stored.folder)}\n`);
    await rename(folder, destination);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** The issuers a clone's API server accepts beside its own (see {@link seedClusterFolder}); none for other clusters. */
export async function acceptedIssuers(directory: string): Promise<string[]> {
  const text = await readFile(join(directory, ACCEPTED_ISSUERS_FILE), "utf8").catch(() => "");
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
}
