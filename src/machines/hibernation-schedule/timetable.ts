/**
 * The timetable of a HibernationSchedule, pure: from its entries and `now`, the latest event at or before now
 * (what the selected Clusters should be now) and the next one (when to look again). No clock, no I/O.
 *
 * The events of one cron are those its forward iteration (cron-parser's `next()`, in the entry's time zone)
 * yields. `prev()` alone is not used for the latest event: around a DST fall-back it picks the second of a
 * repeated wall time where `next()` picks the first, so an event `next()` yields could lie between a
 * `prev()`-latest event and now, and a sleep would be skipped. `prev()` only finds where to start walking
 * forward; both answers then come from the one forward enumeration, so the latest and the next event are
 * neighbours in it.
 *
 * A fall-back repeats an hour of wall time. A cron whose hour field is `*` runs by real time (its events in that
 * hour come twice, as in Vixie cron), and any other (a step of hours too: a list of them) fires once at a repeated
 * wall time, the first time. cron-parser does the latter only where the zone falls back on the hour: in Pacific/Chatham
 * (03:45 → 02:45) it yields both instants of a daily 03:44. So the walk itself drops an event of a fixed-hour cron
 * whose wall time is not later than one it yielded.
 *
 * Ties: a start and an end at the same instant (of one entry or of two) are one wake: a Cluster is never put
 * to sleep by two entries that disagree.
 */
import { CronExpressionParser } from "cron-parser";
import { DEFAULT_SCHEDULE_LOCATION } from "../../api/constants/hibernation-schedule.ts";
import type { ScheduleAction, ScheduleEntry } from "../../api/hibernation-schedule.ts";

/** One event in ms since the epoch. */
export interface TimedEvent {
  readonly action: ScheduleAction;
  readonly atMs: number;
}

/** The answer for one `now`: the latest event at or before it and the next one after it (absent: none). */
export interface TimetableAt {
  readonly latest?: TimedEvent;
  readonly next?: TimedEvent;
}

/** How far before `prev()`'s answer the forward walk starts: more than any DST shift (at most 2 hours). */
const WALK_BACK_MS = 3 * 60 * 60 * 1000;
/** At most this many forward steps per walk (an every-minute cron makes ~180 in 3 hours). */
const WALK_LIMIT = 5_000;
/** At most this many walks further back when one finds no event at or before now. */
const WALKS = 4;

/** Whether `location` is an IANA time zone this runtime knows. */
function zoneProblem(location: string): string | undefined {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: location });
    return undefined;
  } catch (error) {
    return `location ${JSON.stringify(location)} is not a known IANA time zone (${(error as Error).message})`;
  }
}

/** What is wrong with one cron (5 fields: minute hour day-of-month month day-of-week); undefined: nothing. */
export function cronProblem(expression: string, location = DEFAULT_SCHEDULE_LOCATION): string | undefined {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 || fields[0] === "")
    return `${JSON.stringify(expression)} must have 5 fields (minute hour day-of-month month day-of-week), has ${fields[0] === "" ? 0 : fields.length}`;
  try {
    const parsed = CronExpressionParser.parse(expression, { currentDate: new Date(0), tz: location });
    parsed.next();
    return undefined;
  } catch (error) {
    return `${JSON.stringify(expression)} does not parse: ${(error as Error).message}`;
  }
}

/** Everything wrong with the entries, each naming its entry (`schedules[1].start: …`). */
export function timetableProblems(entries: readonly ScheduleEntry[]): string[] {
  const problems: string[] = [];
  for (const [index, entry] of entries.entries()) {
    const at = `schedules[${index}]`;
    if (entry.start === undefined && entry.end === undefined) problems.push(`${at}: needs start or end`);
    const location = entry.location ?? DEFAULT_SCHEDULE_LOCATION;
    const zone = zoneProblem(location);
    if (zone) {
      problems.push(`${at}.location: ${zone}`);
      continue;
    }
    for (const field of ["start", "end"] as const) {
      const expression = entry[field];
      if (expression === undefined) continue;
      const problem = cronProblem(expression, location);
      if (problem) problems.push(`${at}.${field}: ${problem}`);
    }
  }
  return problems;
}

const wallClocks = new Map<string, Intl.DateTimeFormat>();

/** The local wall time of `atMs` in `location` to the minute (the finest a 5-field cron names), sortable. */
function wallMinute(location: string, atMs: number): string {
  let format = wallClocks.get(location);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: location,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
    });
    wallClocks.set(location, format);
  }
  const part = Object.fromEntries(format.formatToParts(atMs).map(({ type, value }) => [type, value]));
  return `${part.year}-${part.month}-${part.day}T${part.hour}:${part.minute}`;
}

/**
 * The events of `expression` in `location` strictly after `startMs`, in order, by forward iteration. Unless the
 * hour field is `*`, an event whose wall time is not later than one yielded before (a time a fall-back repeats) is
 * dropped.
 */
function* forwardFrom(expression: string, location: string, startMs: number): Generator<number> {
  const iterator = CronExpressionParser.parse(expression, { currentDate: new Date(startMs), tz: location });
  const byRealTime = expression.trim().split(/\s+/)[1] === "*";
  let latestWall = "";
  for (;;) {
    const at = iterator.next().getTime();
    if (at <= startMs) continue;
    if (byRealTime) {
      yield at;
      continue;
    }
    const wall = wallMinute(location, at);
    if (wall <= latestWall) continue;
    latestWall = wall;
    yield at;
  }
}

/**
 * The events of `expression` in `location` strictly after `fromMs`, in order, by a forward walk begun
 * {@link WALK_BACK_MS} earlier: a walk begun inside a wall-clock hour that a fall-back repeats would give that
 * hour's times a second time, where one begun before the change (as {@link latestOf}'s walk is) gives them once.
 */
function* forwardAfter(expression: string, location: string, fromMs: number): Generator<number> {
  for (const at of forwardFrom(expression, location, fromMs - WALK_BACK_MS)) {
    // Before `fromMs`, or in its second (cron-parser works in whole seconds): not after it.
    if (at > fromMs) yield at;
  }
}

/** The events of `expression` in `location` after `fromMs` (strictly), by forward iteration: at most `count`. */
export function eventsAfter(expression: string, location: string, fromMs: number, count: number): number[] {
  const out: number[] = [];
  for (const at of forwardAfter(expression, location, fromMs)) {
    if (out.length >= count) break;
    out.push(at);
  }
  return out;
}

/** The events of `expression` in `location` in (`fromMs`, `toMs`], by forward iteration: at most `limit`. */
export function eventsBetween(
  expression: string,
  location: string,
  fromMs: number,
  toMs: number,
  limit = WALK_LIMIT,
): number[] {
  const out: number[] = [];
  for (const at of forwardAfter(expression, location, fromMs)) {
    if (at > toMs || out.length >= limit) break;
    out.push(at);
  }
  return out;
}

/** The next event of one cron strictly after `nowMs`. */
function nextOf(expression: string, location: string, nowMs: number): number | undefined {
  try {
    return eventsAfter(expression, location, nowMs, 1)[0];
  } catch {
    return undefined;
  }
}

/** The latest event of one cron at or before `nowMs`: the last of the forward walk that is not after now. */
function latestOf(expression: string, location: string, nowMs: number): number | undefined {
  let anchor = nowMs + 1; // prev() is strict: from a ms later, an event exactly at now counts
  try {
    for (let walk = 0; walk < WALKS; walk++) {
      const before = CronExpressionParser.parse(expression, { currentDate: new Date(anchor), tz: location })
        .prev()
        .getTime();
      const start = before - WALK_BACK_MS;
      let latest: number | undefined;
      let steps = 0;
      for (const at of forwardFrom(expression, location, start)) {
        if (at > nowMs || ++steps > WALK_LIMIT) break;
        latest = at;
      }
      if (latest !== undefined) return latest;
      anchor = start;
    }
  } catch {
    // no event before now (or none at all): nothing to catch up with
  }
  return undefined;
}

/** The later of two events; at the same instant a wake wins. */
function later(a: TimedEvent | undefined, b: TimedEvent | undefined): TimedEvent | undefined {
  if (!a) return b;
  if (!b) return a;
  if (a.atMs !== b.atMs) return a.atMs > b.atMs ? a : b;
  return a.action === "wake" ? a : b;
}

/** The sooner of two events; at the same instant a wake wins. */
function sooner(a: TimedEvent | undefined, b: TimedEvent | undefined): TimedEvent | undefined {
  if (!a) return b;
  if (!b) return a;
  if (a.atMs !== b.atMs) return a.atMs < b.atMs ? a : b;
  return a.action === "wake" ? a : b;
}

/**
 * The latest event at or before `nowMs` and the next after it, over every entry (`start` = sleep, `end` =
 * wake). Entries with problems ({@link timetableProblems}) are left out; the caller shows them.
 */
export function timetableAt(entries: readonly ScheduleEntry[], nowMs: number): TimetableAt {
  let latest: TimedEvent | undefined;
  let next: TimedEvent | undefined;
  for (const entry of entries) {
    const location = entry.location ?? DEFAULT_SCHEDULE_LOCATION;
    if (zoneProblem(location)) continue;
    for (const [field, action] of [
      ["start", "sleep"],
      ["end", "wake"],
    ] as const) {
      const expression = entry[field];
      if (expression === undefined || cronProblem(expression, location)) continue;
      const before = latestOf(expression, location, nowMs);
      const after = nextOf(expression, location, nowMs);
      if (before !== undefined) latest = later(latest, { action, atMs: before });
      if (after !== undefined) next = sooner(next, { action, atMs: after });
    }
  }
  return { ...(latest ? { latest } : {}), ...(next ? { next } : {}) };
}
