/** JSON patch values: pointer escaping per RFC 6901 and a diff that reproduces its target exactly. */
import fc from "fast-check";
import { applyPatch, deepClone, unescapePathComponent } from "fast-json-patch";
import { describe, expect, it } from "vitest";
import {
  diff,
  escapeSegment,
  type Json,
  Patch,
  pointer,
} from "../../../../src/machines/shared/json-patch.ts";

// fast-json-patch, our stand-in for the API server here, refuses prototype keys (no Kubernetes key is one).
const key = fc.string().filter((k) => !["__proto__", "constructor", "prototype"].includes(k));

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
      fc.property(key, fc.jsonValue(), (name, value) => {
        const document = { labels: {} as Record<string, unknown> };
        applyPatch(document, [Patch.add(["labels", name], value as Json)]);
        expect(Object.keys(document.labels)).toEqual([name]);
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
    // As on the wire: JSON has no -0, so values go through a JSON round trip.
    const wire = fc.jsonValue().map((value) => JSON.parse(JSON.stringify(value)) as unknown);
    const object = fc.dictionary(key, wire);
    fc.assert(
      fc.property(object, object, (before, after) => {
        const patched = applyPatch(deepClone(before), diff(before as Json, after as Json)).newDocument;
        expect(patched).toEqual(after);
      }),
    );
  });
});
