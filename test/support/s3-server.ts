/**
 * versitygw (the Versity S3 Gateway over a plain folder) as the real S3-compatible store the snapshot store is proven
 * against: started on a free port with one account, a bucket made, stopped and its folder removed. Built once per
 * machine by hack/s3/build.sh (a few minutes the first time).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { findBuiltBinary, hackScript } from "../../src/util/executables.ts";
import { freePorts } from "../../src/util/free-ports.ts";
import { eventually } from "./eventually.ts";

/** The repository's build script; it honours OPENMCP_S3_ASSETS and the per-machine cache. */
export const S3_BUILD_SCRIPT = hackScript("s3", "build.sh");

/** The versitygw binary, building it the first time on a machine. */
export const findVersitygw = (): string => findBuiltBinary(S3_BUILD_SCRIPT, "versitygw").binary;

export interface S3Server {
  readonly pid: number;
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** The folder its buckets are (each bucket a folder, each object a file under it). */
  readonly root: string;
  /** A client with the server's account (path style). */
  client(): S3Client;
  createBucket(name: string): Promise<void>;
  stop(): Promise<void>;
}

/** Starts versitygw with a fresh account on a free port and waits until it answers S3 requests. */
export async function startS3Server(): Promise<S3Server> {
  const binary = findVersitygw();
  const [port] = (await freePorts(1)) as [number];
  const root = mkdtempSync(join(tmpdir(), "versitygw-"));
  const accessKeyId = `test${Math.random().toString(36).slice(2, 10)}`;
  const secretAccessKey = `secret-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
  const endpoint = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    binary,
    [
      "--access",
      accessKeyId,
      "--secret",
      secretAccessKey,
      "--port",
      `127.0.0.1:${port}`,
      "--quiet",
      "posix",
      root,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let output = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  });
  const client = () =>
    new S3Client({
      endpoint,
      region: "us-east-1",
      forcePathStyle: true,
      credentials: { accessKeyId, secretAccessKey },
    });
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`versitygw exited (${child.exitCode}):\n${output}`);
      // Any HTTP answer (an S3 error for an anonymous request included) means it serves.
      return (await fetch(endpoint).catch(() => undefined)) !== undefined;
    },
    { what: "versitygw to answer", timeoutMs: 30_000 },
  );
  return {
    pid: child.pid ?? 0,
    endpoint,
    accessKeyId,
    secretAccessKey,
    root,
    client,
    async createBucket(name) {
      const s3 = client();
      try {
        await s3.send(new CreateBucketCommand({ Bucket: name }));
      } finally {
        s3.destroy();
      }
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}
