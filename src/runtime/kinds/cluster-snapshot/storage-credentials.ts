/**
 * The keys of a snapshot's object store, read from the Secret its spec names just before the backend is called:
 * they go into the reference handed to the backend and nowhere else (not the status, a log, an Event or an error).
 */
import type { KubeConfig } from "@kubernetes/client-node";
import { type SnapshotReference, SnapshotStorageError } from "../../../api/control-plane-snapshot.ts";
import { apiSecretReader } from "../../api-server/secret-reader.ts";

/** The Secret's keys holding the credentials. */
export const S3_CREDENTIAL_KEYS = { accessKeyId: "accessKeyId", secretAccessKey: "secretAccessKey" } as const;

/**
 * `reference` with its S3 location's credentials from their Secret; a folder reference as it is. Throws
 * {@link SnapshotStorageError} (`CredentialsNotFound`, naming the Secret and key) when the Secret or a key is missing.
 */
export async function withStorageCredentials(
  reference: SnapshotReference,
  kubeConfig: KubeConfig,
): Promise<SnapshotReference> {
  const s3 = reference.location.s3;
  if (!s3) return reference;
  const [namespace = "", name = ""] = s3.credentialsSecret.split("/");
  const read = apiSecretReader(kubeConfig);
  const accessKeyId = await read(namespace, name, S3_CREDENTIAL_KEYS.accessKeyId);
  const secretAccessKey = await read(namespace, name, S3_CREDENTIAL_KEYS.secretAccessKey);
  const missing = [
    ...(accessKeyId ? [] : [S3_CREDENTIAL_KEYS.accessKeyId]),
    ...(secretAccessKey ? [] : [S3_CREDENTIAL_KEYS.secretAccessKey]),
  ];
  if (!accessKeyId || !secretAccessKey)
    throw new SnapshotStorageError(
      "CredentialsNotFound",
      `Secret ${s3.credentialsSecret} (spec.storage.s3.credentialsSecretRef) does not exist or lacks key ${missing.join(" and ")}: create it with keys ${S3_CREDENTIAL_KEYS.accessKeyId} and ${S3_CREDENTIAL_KEYS.secretAccessKey} for the S3 store at ${s3.endpoint}`,
    );
  return { ...reference, location: { s3: { ...s3, credentials: { accessKeyId, secretAccessKey } } } };
}
