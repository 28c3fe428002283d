/** startDetached: a process in its own group, its output in files, its exit status recorded for a later reader. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startDetached } from "../../../src/util/detached-process.ts";
import { eventually } from "../../support/eventually.ts";

const folders: string[] = [];
const folder = () => {
  const made = mkdtempSync(join(tmpdir(), "detached-"));
  folders.push(made);
  return made;
};
afterEach(() => {
  for (const made of folders.splice(0)) rmSync(made, { recursive: true, force: true });
});

describe("startDetached", () => {
  it("records the exit status through its wrapper, its output in fresh files", async () => {
    const dir = folder();
    const [stdout, stderr, exitFile] = ["out", "err", "exit"].map((name) => join(dir, name)) as [
      string,
      string,
      string,
    ];
    writeFileSync(stdout, "from before\n");
    const child = startDetached({
      command: "/bin/sh",
      args: ["-c", "echo out; echo err >&2; exit 3"],
      stdout,
      stderr,
      truncate: true,
      exitStatus: { exitFile, marker: "omc-test-detached" },
    });
    expect(child.pid).toBeGreaterThan(0);
    await eventually(() => expect(readFileSync(exitFile, "utf8")).toBe("3\n"));
    expect(readFileSync(stdout, "utf8")).toBe("out\n");
    expect(readFileSync(stderr, "utf8")).toBe("err\n");
  });

  it("appends to a log by default, stdout and stderr in one file", async () => {
    const log = join(folder(), "log");
    writeFileSync(log, "from before\n");
    const child = startDetached({ command: "/bin/sh", args: ["-c", "echo out; echo err >&2"], stdout: log });
    await new Promise((resolve) => child.once("exit", resolve));
    expect(readFileSync(log, "utf8")).toBe("from before\nout\nerr\n");
  });
});
