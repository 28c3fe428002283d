/** Merge patches of remote objects: what counts as a difference, label and annotation patches, when to send again. */
import { describe, expect, it } from "vitest";
import {
  containedIn,
  copiedEntries,
  mergePatch,
  patchWorthSending,
} from "../../../../src/providers/shared/merge-patch.ts";

describe("containedIn", () => {
  it.each([
    { wanted: { a: 1 }, remote: { a: 1, defaulted: true }, contained: true },
    { wanted: { a: 1 }, remote: { a: 2 }, contained: false },
    { wanted: [{ a: 1 }], remote: [{ a: 1, b: 2 }], contained: true },
    { wanted: [{ a: 1 }], remote: [{ a: 1 }, { a: 2 }], contained: false },
    { wanted: { a: 1 }, remote: [1], contained: false },
  ])(
    "ignores what the remote side defaulted beside the wanted values, but not a different list: $wanted in $remote is $contained",
    ({ wanted, remote, contained }) => {
      expect(containedIn(wanted, remote)).toBe(contained);
    },
  );
});

describe("copiedEntries", () => {
  it("keeps openMCP's copied metadata and, for labels, the named extra labels", () => {
    const map = { "metadata.open-control-plane.io/x": "1", "openmcp.cloud/project": "p", other: "no" };
    expect(copiedEntries(map, true, ["openmcp.cloud/project"])).toEqual({
      "metadata.open-control-plane.io/x": "1",
      "openmcp.cloud/project": "p",
    });
    expect(copiedEntries(map, false, ["openmcp.cloud/project"])).toEqual({
      "metadata.open-control-plane.io/x": "1",
    });
  });
});

describe("mergePatch", () => {
  it("is undefined when nothing differs", () => {
    expect(mergePatch({ labels: { a: "1" } }, { labels: { a: "1" } }, {})).toBeUndefined();
  });

  it("sets changed labels, removes copied keys that went, keeps foreign ones, and carries the spec", () => {
    const stored = {
      labels: { "metadata.open-control-plane.io/gone": "x", foreign: "y", "team/extra": "z" },
      annotations: { kept: "1" },
    };
    const desired = { labels: { a: "2" }, annotations: { kept: "1" } };
    expect(mergePatch(stored, desired, { purpose: "dev" }, ["team/extra"])).toEqual({
      metadata: { labels: { a: "2", "metadata.open-control-plane.io/gone": null, "team/extra": null } },
      spec: { purpose: "dev" },
    });
  });
});

describe("patchWorthSending", () => {
  const changes = { spec: { purpose: "development" } };
  const sent = { changes: JSON.stringify(changes), generation: 4 };

  it("sends changes unless the very same patch was taken in and the difference stayed", () => {
    expect(patchWorthSending(undefined, undefined, 3)).toBe(false);
    expect(patchWorthSending(changes, undefined, 3)).toBe(true);
    expect(patchWorthSending(changes, sent, 3)).toBe(true); // a look from before the patch landed
    expect(patchWorthSending(changes, sent, 4)).toBe(false); // taken in, and changed back remotely
    expect(patchWorthSending({ spec: { purpose: "production" } }, sent, 4)).toBe(true); // a new wish
  });
});
