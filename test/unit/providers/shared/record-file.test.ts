/** A backend's record file: survives a restart, writes only on change, and refuses a file it cannot read. */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RecordFile } from "../../../../src/providers/shared/record-file.ts";

interface Note {
  readonly uid: string;
  readonly value: string;
}

let directory: string;
let path: string;
beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), "record-file-"));
  path = join(directory, "notes.json");
});
afterEach(() => rmSync(directory, { recursive: true, force: true }));

describe("RecordFile", () => {
  it("starts empty without a file, and a new instance reads what an earlier one put", () => {
    const first = new RecordFile<Note>(path, "notes");
    expect(first.size).toBe(0);
    first.put({ uid: "a", value: "1" });
    first.put({ uid: "b", value: "2" });
    first.remove("b");
    const second = new RecordFile<Note>(path, "notes");
    expect(second.get("a")).toEqual({ uid: "a", value: "1" });
    expect(second.has("b")).toBe(false);
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ notes: [{ uid: "a", value: "1" }] });
  });

  it("does not write when a record is put again unchanged, nor when an unknown uid is removed", () => {
    const file = new RecordFile<Note>(path, "notes");
    file.put({ uid: "a", value: "1" });
    writeFileSync(path, JSON.stringify({ notes: [] })); // a marker: a write would replace it
    file.put({ uid: "a", value: "1" });
    file.remove("zzz");
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ notes: [] });
    file.put({ uid: "a", value: "2" });
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ notes: [{ uid: "a", value: "2" }] });
    expect(statSync(path).isFile()).toBe(true);
  });

  it("throws on a file that does not parse, rather than forget what it held", () => {
    writeFileSync(path, "{ not json");
    expect(() => new RecordFile<Note>(path, "notes")).toThrow();
  });
});
