/**
 * The S3 snapshot store's reading of the SDK's errors: refused credentials, a missing bucket and a store that does
 * not answer each become their own reason, with a message naming the endpoint, bucket and Secret, never a key; any
 * other error is left to the caller.
 */
import { NoSuchBucket, NoSuchKey, S3ServiceException } from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import type { S3SnapshotLocation } from "../../../../src/api/control-plane-snapshot.ts";
import { storageFailureOf } from "../../../../src/providers/shared/s3-snapshots.ts";

const location: S3SnapshotLocation = {
  endpoint: "https://s3.example.test",
  bucket: "snapshots",
  forcePathStyle: true,
  credentialsSecret: "team-a/s3-credentials",
  credentials: { accessKeyId: "AKIAEXAMPLEKEY", secretAccessKey: "very-secret-value" },
};

const serviceError = (name: string) =>
  new S3ServiceException({
    name,
    $fault: "client",
    $metadata: { httpStatusCode: 403 },
    message: `${name}: key AKIAEXAMPLEKEY, signature of very-secret-value`,
  });

const systemError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:1`), { code });

describe("storageFailureOf", () => {
  it.each(["AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch"])(
    "reads %s as StorageAccessDenied naming the endpoint, bucket and Secret, never a key",
    (code) => {
      const failure = storageFailureOf(serviceError(code), location);
      expect(failure).toMatchObject({ name: "SnapshotStorageError", reason: "StorageAccessDenied" });
      expect(failure?.message).toContain("https://s3.example.test");
      expect(failure?.message).toContain("bucket snapshots");
      expect(failure?.message).toContain("Secret team-a/s3-credentials");
      expect(failure?.message).toContain(code);
      expect(failure?.message).not.toContain("AKIAEXAMPLEKEY");
      expect(failure?.message).not.toContain("very-secret-value");
    },
  );

  it("reads NoSuchBucket as StorageBucketMissing", () => {
    const failure = storageFailureOf(new NoSuchBucket({ message: "gone", $metadata: {} }), location);
    expect(failure).toMatchObject({ reason: "StorageBucketMissing" });
    expect(failure?.message).toContain("bucket snapshots");
  });

  it.each(["ECONNREFUSED", "ENOTFOUND", "ETIMEDOUT", "ECONNRESET"])(
    "reads a connection's %s as StorageUnreachable, also inside an AggregateError or as a cause",
    (code) => {
      for (const error of [
        systemError(code),
        new AggregateError([systemError(code)], "all addresses failed"),
        new Error("request failed", { cause: systemError(code) }),
      ]) {
        const failure = storageFailureOf(error, location);
        expect(failure).toMatchObject({ reason: "StorageUnreachable" });
        expect(failure?.message).toContain(code);
        expect(failure?.message).toContain("https://s3.example.test");
      }
    },
  );

  it("reads the SDK's TimeoutError as StorageUnreachable", () => {
    const timeout = Object.assign(new Error("timed out"), { name: "TimeoutError" });
    expect(storageFailureOf(timeout, location)).toMatchObject({ reason: "StorageUnreachable" });
  });

  it("leaves other errors to the caller (a missing key is not a storage failure)", () => {
    expect(storageFailureOf(new NoSuchKey({ message: "no", $metadata: {} }), location)).toBeUndefined();
    expect(storageFailureOf(serviceError("InternalError"), location)).toBeUndefined();
    expect(storageFailureOf(new Error("plain"), location)).toBeUndefined();
    expect(storageFailureOf("not an error", location)).toBeUndefined();
  });
});
