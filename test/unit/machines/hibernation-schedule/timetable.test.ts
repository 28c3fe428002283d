/** The timetable's rule at a fall-back, by example (its properties: test/property/machines/hibernation-timetable). */
import { describe, expect, it } from "vitest";
import { eventsAfter } from "../../../../src/machines/hibernation-schedule/timetable.ts";

const instants = (expression: string, zone: string, from: string, count: number) =>
  eventsAfter(expression, zone, Date.parse(from), count).map((ms) => new Date(ms).toISOString());

describe("the timetable at a fall-back", () => {
  it("fires a fixed-hour cron once at a repeated wall time, the first time", () => {
    // Berlin repeats 02:00–02:59 on 2025-10-26 (CEST, UTC+2, then CET, UTC+1): then the next day's 02:00.
    expect(instants("*/20 2 * * *", "Europe/Berlin", "2025-10-25T23:00:00Z", 4)).toEqual([
      "2025-10-26T00:00:00.000Z",
      "2025-10-26T00:20:00.000Z",
      "2025-10-26T00:40:00.000Z",
      "2025-10-27T01:00:00.000Z",
    ]);
  });

  it("does so where the zone falls back off the hour (Chatham: 03:45 → 02:45), where cron-parser yields both instants", () => {
    // 03:44 at UTC+13:45, the second 03:44 (UTC+12:45) skipped, then the next day's.
    expect(instants("44 3 * * *", "Pacific/Chatham", "2025-04-05T12:00:00Z", 2)).toEqual([
      "2025-04-05T13:59:00.000Z",
      "2025-04-06T14:59:00.000Z",
    ]);
  });

  it("runs a cron whose hour field is * by real time, as Vixie cron does: every 20 minutes through the repeated hour", () => {
    expect(instants("*/20 * * * *", "Europe/Berlin", "2025-10-26T00:10:00Z", 5)).toEqual([
      "2025-10-26T00:20:00.000Z", // 02:20 CEST
      "2025-10-26T00:40:00.000Z", // 02:40 CEST
      "2025-10-26T01:00:00.000Z", // 02:00 CET
      "2025-10-26T01:20:00.000Z", // 02:20 CET
      "2025-10-26T01:40:00.000Z", // 02:40 CET
    ]);
    // Hourly: both 02:00s, an hour apart (two events at one wall time in a row, which a fixed hour would not fire).
    expect(instants("0 * * * *", "Europe/Berlin", "2025-10-25T23:30:00Z", 3)).toEqual([
      "2025-10-26T00:00:00.000Z", // 02:00 CEST
      "2025-10-26T01:00:00.000Z", // 02:00 CET
      "2025-10-26T02:00:00.000Z", // 03:00 CET
    ]);
    // A step of hours is a list of hours: 02:00 once, then 04:00.
    expect(instants("0 */2 * * *", "Europe/Berlin", "2025-10-25T23:30:00Z", 2)).toEqual([
      "2025-10-26T00:00:00.000Z", // 02:00 CEST
      "2025-10-26T03:00:00.000Z", // 04:00 CET
    ]);
  });
});
