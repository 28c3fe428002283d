/**
 * The Shoot patch converges: after the merge patch `shootChanges` returns is applied (RFC 7386), nothing is left to
 * change — one write per change, never a write on every pass — and what Gardener added beside the template stays.
 */
import fc from "fast-check";
import { expect, it } from "vitest";
import type { JsonObject } from "../../../src/api/common.ts";
import { compareVersions } from "../../../src/machines/backend-cluster/kubernetes-version.ts";
import { type Shoot, shootChanges } from "../../../src/providers/gardener-shoot.ts";
import { mergePatch } from "../../support/fake-remote-store.ts";

const scalar = fc.oneof(fc.constantFrom("a", "b", "local"), fc.integer({ min: 0, max: 3 }), fc.boolean());
const value = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: "small" }, scalar, fc.array(tie("node"), { maxLength: 2 }), tie("object")),
  object: fc.dictionary(fc.constantFrom("x", "y", "z"), tie("node"), { maxKeys: 3 }),
})).object as fc.Arbitrary<JsonObject>;
const spec = fc.dictionary(fc.constantFrom("region", "provider", "networking", "addons"), value, {
  maxKeys: 3,
});
const version = fc.constantFrom("1.32.0", "1.33.2", "1.34.0");
const labels = fc.dictionary(
  fc.constantFrom(
    "team",
    "metadata.open-control-plane.io/a",
    "metadata.open-control-plane.io/b",
    "gardener.cloud/x",
  ),
  fc.constantFrom("1", "2"),
  { maxKeys: 3 },
);
const shoot = (s: JsonObject, v: string, l: Record<string, string>): Shoot => ({
  metadata: { name: "s", namespace: "garden-dev", labels: l },
  spec: { ...s, kubernetes: { version: v } },
});

it("after one patch nothing is left to change, Gardener's fields beside the template stay, and downgrades are refused", () => {
  const seen = { changed: 0, unchanged: 0, refused: 0 };
  fc.assert(
    fc.property(
      spec,
      version,
      labels,
      spec,
      version,
      labels,
      fc.boolean(),
      (storedSpec, running, storedLabels, otherSpec, otherVersion, otherLabels, same) => {
        // Half the time the desired Shoot is what is stored (the steady state: nothing may be written).
        const [wantedSpec, wanted, wantedLabels] = same
          ? [storedSpec, running, storedLabels]
          : [otherSpec, otherVersion, otherLabels];
        const stored = shoot(storedSpec, running, storedLabels);
        const desired = shoot(wantedSpec, wanted, wantedLabels);
        if (compareVersions(wanted, running) < 0) {
          expect(() => shootChanges(stored, desired)).toThrow(/does not downgrade/);
          seen.refused++;
          return;
        }
        const patch = shootChanges(stored, desired);
        if (!patch) {
          seen.unchanged++;
          return;
        }
        seen.changed++;
        const patched = mergePatch(stored, patch) as Shoot;
        expect(shootChanges(patched, desired)).toBeUndefined();
        // Top-level spec fields the template does not name are untouched (Gardener's defaults, its own fields).
        for (const key of Object.keys(storedSpec))
          if (!(key in wantedSpec)) expect(patched.spec[key]).toEqual(storedSpec[key]);
        // Labels neither the template nor openMCP's prefix names are never touched.
        expect(patched.metadata.labels?.["gardener.cloud/x"]).toBe(
          wantedLabels["gardener.cloud/x"] ?? storedLabels["gardener.cloud/x"],
        );
      },
    ),
    { numRuns: 1_000 },
  );
  // Every branch is reached often enough to mean something.
  expect(seen.changed).toBeGreaterThan(100);
  expect(seen.unchanged).toBeGreaterThan(100);
  expect(seen.refused).toBeGreaterThan(100);
});
