/**
 * kube-apiserver's own validation and claim mapping of an authentication configuration, as a tool the tests run:
 * `hack/authn-check` built once per machine (and per source) with the module of `hack/kube` (whose Go modules
 * building the kube binaries downloaded), cached beside those binaries.
 */
import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFile, mkdir, readFile, rename, stat } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { machineCache } from "./machine-cache.ts";

/** What kube-apiserver makes of one configuration and one token's claims. */
export interface AuthnCheckResult {
  /** Why kube-apiserver refuses the configuration; absent when it accepts it. */
  readonly error?: string;
  readonly username?: string;
  readonly usernameError?: string;
  readonly groups?: string | readonly string[];
  readonly groupsError?: string;
}

const source = join(import.meta.dirname, "../../hack/authn-check/main.go");
const kubeModule = join(import.meta.dirname, "../../hack/kube");

/** Builds the tool unless the cache has it; returns its path. Throws, saying what is missing, when Go is not there. */
export async function authnCheckTool(): Promise<string> {
  const code = await readFile(source);
  const modules = await readFile(join(kubeModule, "go.sum"));
  const hash = createHash("sha256").update(code).update(modules).digest("hex").slice(0, 16);
  const directory = machineCache("authn-check", hash);
  const tool = join(directory, "authn-check");
  if (
    await stat(tool).then(
      () => true,
      () => false,
    )
  )
    return tool;
  const work = join(directory, `build-${process.pid}`);
  await mkdir(work, { recursive: true });
  for (const file of ["go.mod", "go.sum"]) await copyFile(join(kubeModule, file), join(work, file));
  await copyFile(source, join(work, "main.go"));
  try {
    await promisify(execFile)("go", ["build", "-o", `${tool}.${process.pid}`, "."], {
      cwd: work,
      // Every core, whatever the test run's GOMAXPROCS (1, vitest.config.ts).
      env: {
        ...process.env,
        GOTOOLCHAIN: "local",
        GOFLAGS: "-mod=mod",
        GOMAXPROCS: String(availableParallelism()),
      },
    });
  } catch (error) {
    throw new Error(`building hack/authn-check needs Go and the modules of hack/kube: ${String(error)}`);
  }
  await rename(`${tool}.${process.pid}`, tool);
  return tool;
}

/** Runs the tool once over many inputs (one process: it is fast, starting it is not). */
export async function authnCheck(
  tool: string,
  inputs: readonly { readonly config: unknown; readonly claims?: Readonly<Record<string, unknown>> }[],
): Promise<AuthnCheckResult[]> {
  const child = spawn(tool, [], { stdio: ["pipe", "pipe", "inherit"] });
  const chunks: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<void>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve() : reject(new Error(`authn-check exited with ${code}`)),
    );
  });
  child.stdin.end(`${inputs.map((input) => JSON.stringify(input)).join("\n")}\n`);
  await done;
  const lines = Buffer.concat(chunks).toString("utf8").trim().split("\n");
  if (lines.length !== inputs.length)
    throw new Error(`authn-check answered ${lines.length} of ${inputs.length} inputs`);
  return lines.map((line) => JSON.parse(line) as AuthnCheckResult);
}
