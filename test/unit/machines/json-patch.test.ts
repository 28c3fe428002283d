/** JSON patch values: pointer escaping per RFC 6901 and a diff that reproduces its target exactly. */
import fc from "fast-check";
import { applyPatch, deepClone, unescapePathComponent } from "fast-json-patch";
import { describe, expect, it } from "vitest";
import { diff, escapeSegment, type Json, Patch, pointer } from "../../../src/machines/json-patch.ts";

describe("pointer", () => {
  it("escapes ~ before / so label keys survive", () => {
    expect(pointer("metadata", "labels", "clusters.openmcp.cloud/provider")).toBe(
      "/metadata/labels/clusters.openmcp.cloud~1provider",
    );
    expect(escapeSegment("a~/b")).toBe("a~0~1b");
    expect(pointer("status", "conditions", 0)).toBe("/status/conditions/0");
  });

  it("round-trips any segment through the RFC 6901 unescape", () => {
    fc.assert(
      fc.property(fc.string(), (segment) => unescapePathComponent(escapeSegment(segment)) === segment),
    );
  });

  it("addresses the key it names when applied", () => {
    fc.assert(
      fc.property(fc.string(), fc.jsonValue(), (key, value) => {
        const document = { labels: {} as Record<string, unknown> };
        applyPatch(document, [Patch.add(["labels", key], value as Json)]);
        expect(Object.keys(document.labels)).toEqual([key]);
      }),
    );
  });
});

describe("diff", () => {
  it("is empty for equal documents", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => diff({ v: value as Json }, { v: value as Json }).length === 0),
    );
  });

  it("turns the first document into the second", () => {
    const object = fc.dictionary(fc.string(), fc.jsonValue());
    fc.assert(
      fc.property(object, object, (before, after) => {
        const patched = applyPatch(deepClone(before), diff(before as Json, after as Json)).newDocument;
        expect(patched).toEqual(after);
      }),
    );
  });
});
