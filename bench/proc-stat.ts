/** A process's line of /proc/<pid>/stat, read for the benchmarks: its name, CPU times and start. Linux only. */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

/** Ticks per second of the CPU times /proc reports (USER_HZ). */
export const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** What /proc/<pid>/stat says of a process; CPU times in ticks. */
export interface ProcStat {
  readonly name: string;
  /** Its parent's pid when read (1, or a subreaper's, once the parent has gone). */
  readonly parentPid: number;
  readonly userTicks: number;
  readonly systemTicks: number;
  /** When it started (ticks since boot): with the pid, names the process (a pid may be used again). */
  readonly startTicks: number;
}

/** The stat of process `pid`; undefined when it has gone (or never was). */
export function procStat(pid: number | string): ProcStat | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // The name is in parentheses and may hold spaces or parentheses itself: the fields start after the last ")".
  const close = stat.lastIndexOf(")");
  const fields = stat.slice(close + 2).split(" ");
  return {
    name: stat.slice(stat.indexOf("(") + 1, close),
    parentPid: Number(fields[1]), // ppid, field 4
    userTicks: Number(fields[11]), // utime, field 14 of stat
    systemTicks: Number(fields[12]), // stime, field 15
    startTicks: Number(fields[19]), // starttime, field 22
  };
}
