/**
 * A control plane's certificate files on a real file system, written by a process killed with kill -9 at any
 * moment: read back they are none (the next start makes a new set) or one whole set, never one with an empty
 * file or files of two sets (kube-apiserver would refuse them at every start).
 */
import { stat } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { ControlPlaneCertificates } from "../../src/controlplane/certificates.ts";
import {
  certificatePaths,
  readCertificates,
  writeCertificates,
} from "../../src/controlplane/control-plane-files.ts";
import { folderPerTest } from "../support/folder-per-test.ts";
import { killLoopAfter } from "../support/killed-loop.ts";

const modulePath = fileURLToPath(new URL("../../src/controlplane/control-plane-files.ts", import.meta.url));
const KEYS = [
  "caCert",
  "servingCert",
  "servingKey",
  "clientCert",
  "clientKey",
  "serviceAccountKey",
  "serviceAccountPublicKey",
] as const;
/** A stand-in set named `name` (the files' content is not looked at here), each file a few KiB like a real one. */
const aSet = (name: string) =>
  Object.fromEntries(
    KEYS.map((key) => [key, `${name} ${key} ${"x".repeat(3_000)}`]),
  ) as unknown as ControlPlaneCertificates;

const folder = folderPerTest("certificate-files-");

describe("writeCertificates", () => {
  it("writes a set that reads back whole, keys readable by the owner only, and replaces it whole", async () => {
    await writeCertificates(folder(), aSet("first"));
    expect(await readCertificates(folder())).toEqual(aSet("first"));
    expect((await stat(certificatePaths(folder()).servingKey)).mode & 0o777).toBe(0o600);
    expect((await stat(certificatePaths(folder()).caCert)).mode & 0o777).toBe(0o644);
    await writeCertificates(folder(), aSet("second"));
    expect(await readCertificates(folder())).toEqual(aSet("second"));
  });

  it("leaves none or one whole set when its writer is killed with kill -9 at any moment", async () => {
    // Two sets in turn, so a kill can land while one replaces the other; before the fix, most kills left an empty file.
    const loop = `import { writeCertificates } from ${JSON.stringify(modulePath)};
      const set = (name) => Object.fromEntries(${JSON.stringify(KEYS)}.map((key) => [key, name + " " + key + " " + "x".repeat(3000)]));
      process.stdout.write("writing\\n");
      for (let i = 0; ; i++) await writeCertificates(${JSON.stringify(folder())}, set(i % 2 ? "a" : "b"));`;
    for (let round = 0; round < 10; round++) {
      await killLoopAfter(loop, 20 + round * 10);
      const left = await readCertificates(folder());
      if (left !== undefined) expect([aSet("a"), aSet("b")], `round ${round}`).toContainEqual(left);
    }
  }, 60_000);
});
