/**
 * Where a command's CPU goes, by process: runs the command (default `npm test`) and reads /proc every 2 s, keeping
 * each process's user and system CPU; prints, when the command ends, the CPU of each class of process (its name;
 * Node split into vitest workers, engines and others; `@docker` for processes in a container, e.g. a kind node's
 * containerd), beside the whole machine's CPU over the same time (from /proc/stat) as the baseline the classes are
 * shares of, and the least memory available. A process that lives less than 2 s, or the last 2 s of one, is not
 * seen: the "seen" line says how much of the machine's CPU the classes cover. Beside each class's CPU, how many of its
 * processes were alive on average (their lifetimes over the run's: a process that idles costs by living) and how
 * many outlived the command (leaks: processes a test started and never stopped). With `--by-file N`, the N test
 * files whose processes used the most CPU: each vitest worker notes the file it runs (test/support/worker-file-record.ts)
 * and a process counts to the file of the nearest worker among its ancestors (its parent as first seen), so the
 * control planes, engines and CLIs a file starts count to it; a container's processes (kind nodes) descend from
 * Docker, not from a file, and are shown apart, then by container (named from `docker ps`). Linux only; asserts
 * nothing.
 *
 * Usage: node bench/suite-cpu.ts [--top 30] [--by-file 40] [--json <file>] [-- <command> <args…>]
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { CLOCK_TICKS, procStat } from "./proc-stat.ts";

const { values, positionals } = parseArgs({
  options: {
    top: { type: "string", default: "30" },
    "by-file": { type: "string" },
    json: { type: "string" },
  },
  allowPositionals: true,
});
const command = positionals.length > 0 ? positionals : ["npm", "test"];
/** How many files and containers `--by-file` lists; undefined without it. */
const byFileTop = values["by-file"] === undefined ? undefined : Number(values["by-file"]);

/** One process as last read, and what it had used when first seen (processes older than the command). */
interface Seen {
  readonly pid: number;
  /** Its parent when first seen (before a parent's exit hands it to init). */
  readonly parentPid: number;
  /** Its class; taken again when it execs another program (seen first as `runc:[2:INIT]`, a container's process
   * soon is kube-apiserver or systemd, and all its CPU is that program's). */
  cls: string;
  /** The name its class was taken from. */
  name: string;
  /** The Docker container it runs in (its id), if any. */
  readonly container: string | undefined;
  readonly baseline: { readonly user: number; readonly system: number };
  user: number;
  system: number;
  /** When it was first and last seen (ms since the command started; before: 0). */
  readonly firstSeen: number;
  lastSeen: number;
}

/** The class of a process: its name, Node by its role, `@docker` when it runs in a container. */
function classOf(name: string, commandLine: string, cgroup: string): string {
  const node = name === "node" || name === "MainThread" || name.startsWith("node ");
  const base = !node
    ? name
    : /vitest/.test(commandLine)
      ? "node: vitest"
      : /src\/(cli|index)|dist\/|\bengine\b/.test(commandLine)
        ? "node: engine"
        : "node: other";
  return /docker|containerd|kubepods/.test(cgroup) ? `${base} @docker` : base;
}

const read = (path: string): string | undefined => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
};

const commandLineOf = (pid: string) => (read(`/proc/${pid}/cmdline`) ?? "").replaceAll("\0", " ");
const cgroupOf = (pid: string) => read(`/proc/${pid}/cgroup`) ?? "";

const seen = new Map<string, Seen>();
let firstLook = true;
let leastAvailableMiB = Number.POSITIVE_INFINITY;

function look(): void {
  const now = Math.max(0, Date.now() - started);
  const available = read("/proc/meminfo")?.match(/MemAvailable:\s+(\d+)/)?.[1];
  if (available) leastAvailableMiB = Math.min(leastAvailableMiB, Number(available) / 1024);
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const stat = procStat(pid);
    if (!stat) continue;
    const { userTicks: user, systemTicks: system } = stat;
    const key = `${pid}:${stat.startTicks}`; // a pid used again is another process
    let entry = seen.get(key);
    if (!entry) {
      const commandLine = commandLineOf(pid);
      const cgroup = cgroupOf(pid);
      const container = cgroup.match(/\/docker[/-]([0-9a-f]{64})/)?.[1];
      if (container && !containerNames.has(container)) nameContainers = true;
      entry = {
        pid: Number(pid),
        parentPid: stat.parentPid,
        cls: classOf(stat.name, commandLine, cgroup),
        name: stat.name,
        container,
        baseline: firstLook ? { user, system } : { user: 0, system: 0 },
        user: 0,
        system: 0,
        firstSeen: now,
        lastSeen: now,
      };
      seen.set(key, entry);
    }
    if (entry.name !== stat.name) {
      entry.name = stat.name;
      entry.cls = classOf(stat.name, commandLineOf(pid), cgroupOf(pid));
    }
    entry.lastSeen = now;
    entry.user = user - entry.baseline.user;
    entry.system = system - entry.baseline.system;
  }
  firstLook = false;
  if (nameContainers && byFileTop !== undefined) nameNewContainers();
}

/** Container ids and their names, read from `docker ps` whenever a process of a container not named yet is seen. */
const containerNames = new Map<string, string>();
let nameContainers = false;
function nameNewContainers(): void {
  nameContainers = false;
  try {
    const listed = execFileSync("docker", ["ps", "-a", "--no-trunc", "--format", "{{.ID}} {{.Names}}"], {
      encoding: "utf8",
      timeout: 10_000,
    });
    for (const line of listed.split("\n")) {
      const [id, name] = line.split(" ");
      if (id && name) containerNames.set(id, name);
    }
  } catch {
    // no Docker CLI or daemon: containers stay unnamed
  }
}

/** The machine's busy CPU in ticks: user, nice, system, irq, softirq and steal (guest time is within user already). */
function machineBusy(): number {
  const [, ...times] = (read("/proc/stat") ?? "").split("\n")[0]?.trim().split(/\s+/) ?? [];
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = times.map(Number);
  return user + nice + system + irq + softirq + steal;
}

let started = Date.now();
look();
const busyBefore = machineBusy();
started = Date.now();
const timer = setInterval(look, 2_000);
// With --by-file, where the workers note their files (read at the end).
const workerFilesFolder = byFileTop === undefined ? undefined : mkdtempSync(join(tmpdir(), "suite-cpu-"));
const workerFiles = workerFilesFolder && join(workerFilesFolder, "worker-files.tsv");
const child = spawn(command[0] as string, command.slice(1), {
  stdio: "inherit",
  env: workerFiles ? { ...process.env, OPENMCP_TEST_WORKER_FILES: workerFiles } : process.env,
});
const exitCode = await new Promise<number>((resolve) => child.on("exit", (code) => resolve(code ?? 1)));
const ended = Date.now() - started;
look();
clearInterval(timer);
const busy = (machineBusy() - busyBefore) / CLOCK_TICKS;
const wallSeconds = ended / 1_000;

interface ClassTotal {
  user: number;
  system: number;
  processes: number;
  /** Processes alive on average over the command's run. */
  alive: number;
  /** Processes started during the command and still alive after it. */
  outlived: number;
}
const classes = new Map<string, ClassTotal>();
for (const entry of seen.values()) {
  if (entry.user + entry.system === 0) continue;
  const total = classes.get(entry.cls) ?? { user: 0, system: 0, processes: 0, alive: 0, outlived: 0 };
  total.user += entry.user / CLOCK_TICKS;
  total.system += entry.system / CLOCK_TICKS;
  total.processes += 1;
  total.alive += (Math.min(entry.lastSeen, ended) - entry.firstSeen) / ended;
  if (entry.firstSeen > 0 && entry.lastSeen > ended) total.outlived += 1;
  classes.set(entry.cls, total);
}
const rows = [...classes].sort(([, a], [, b]) => b.user + b.system - (a.user + a.system));
const covered = rows.reduce((sum, [, c]) => sum + c.user + c.system, 0);
const figure = (value: number) => value.toFixed(0).padStart(6);
console.log(`\n${command.join(" ")}: exit ${exitCode}, ${wallSeconds.toFixed(0)} s`);
console.log(
  `machine: ${busy.toFixed(0)} CPU-s busy (${(busy / wallSeconds).toFixed(2)} cores on average); seen: ${covered.toFixed(0)} CPU-s (${((100 * covered) / busy).toFixed(0)} %); least memory available ${leastAvailableMiB.toFixed(0)} MiB`,
);
console.log(
  `${"CPU-s".padStart(6)} ${"share".padStart(6)} ${"user".padStart(6)} ${"system".padStart(6)} ${"procs".padStart(6)} ${"alive".padStart(6)} ${"after".padStart(6)}  class`,
);
for (const [name, c] of rows.slice(0, Number(values.top))) {
  const total = c.user + c.system;
  console.log(
    `${figure(total)} ${`${((100 * total) / busy).toFixed(1)}%`.padStart(6)} ${figure(c.user)} ${figure(c.system)} ${String(c.processes).padStart(6)} ${c.alive.toFixed(1).padStart(6)} ${String(c.outlived).padStart(6)}  ${name}`,
  );
}
const byFile = workerFiles ? cpuByFile(workerFiles) : [];
if (byFileTop !== undefined) {
  console.log(`\nby test file (a process counts to the file of the nearest worker among its ancestors):`);
  console.log(`${"CPU-s".padStart(6)} ${"share".padStart(6)} ${"procs".padStart(6)}  file`);
  for (const row of byFile.slice(0, byFileTop)) {
    const mostly = Object.entries(row.classes)
      .sort(([, a], [, b]) => b - a)
      .slice(0, 3)
      .map(([cls, cpu]) => `${cls} ${cpu.toFixed(0)}`)
      .join(", ");
    console.log(
      `${figure(row.cpu)} ${`${((100 * row.cpu) / busy).toFixed(1)}%`.padStart(6)} ${String(row.processes).padStart(6)}  ${row.file} (${mostly})`,
    );
  }
  const byContainer = new Map<string, number>();
  for (const entry of seen.values()) {
    if (!entry.container) continue;
    const name = containerNames.get(entry.container) ?? entry.container.slice(0, 12);
    byContainer.set(name, (byContainer.get(name) ?? 0) + (entry.user + entry.system) / CLOCK_TICKS);
  }
  console.log(`\nby container (${byContainer.size}):`);
  for (const [name, cpu] of [...byContainer].sort(([, a], [, b]) => b - a).slice(0, byFileTop)) {
    console.log(`${figure(cpu)}  ${name}`);
  }
}
if (workerFilesFolder) rmSync(workerFilesFolder, { recursive: true, force: true });

/** One test file's CPU: in all, by class of process, and how many processes. */
interface FileCpu {
  file: string;
  cpu: number;
  classes: Record<string, number>;
  processes: number;
}

/** CPU-s per test file, most first; containers' processes and those of no file as two rows of their own. */
function cpuByFile(workerFiles: string): FileCpu[] {
  const fileOfWorker = new Map<number, string>();
  for (const line of (read(workerFiles) ?? "").split("\n")) {
    const [pid, path] = line.split("\t");
    if (pid && path) fileOfWorker.set(Number(pid), relative(process.cwd(), path));
  }
  const parentOf = new Map<number, number>();
  for (const entry of seen.values()) parentOf.set(entry.pid, entry.parentPid);
  const fileOf = (pid: number): string | undefined => {
    for (let at = pid, hops = 0; at > 1 && hops < 64; at = parentOf.get(at) ?? 0, hops++) {
      const file = fileOfWorker.get(at);
      if (file) return file;
    }
    return undefined;
  };
  const totals = new Map<string, FileCpu>();
  for (const entry of seen.values()) {
    const cpu = (entry.user + entry.system) / CLOCK_TICKS;
    if (cpu === 0) continue;
    const file = entry.cls.endsWith("@docker") ? "(in containers)" : (fileOf(entry.pid) ?? "(no test file)");
    const total = totals.get(file) ?? { file, cpu: 0, classes: {}, processes: 0 };
    total.cpu += cpu;
    total.classes[entry.cls] = (total.classes[entry.cls] ?? 0) + cpu;
    total.processes += 1;
    totals.set(file, total);
  }
  return [...totals.values()].sort((a, b) => b.cpu - a.cpu);
}

if (values.json)
  writeFileSync(
    values.json,
    JSON.stringify(
      { command, exitCode, wallSeconds, busy, leastAvailableMiB, classes: Object.fromEntries(rows), byFile },
      null,
      2,
    ),
  );
process.exitCode = exitCode;
