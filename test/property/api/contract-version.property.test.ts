/** Semantic versioning of the backend contract, over all versions: the rule, and messages naming both. */
import fc from "fast-check";
import { expect, it } from "vitest";
import { contractCompatibility } from "../../../src/api/contract-version.ts";

const version = fc.tuple(fc.nat(20), fc.nat(20), fc.nat(20));
/** An engine's version and a backend's, half the time of the same major version (the interesting case). */
const pair = version.chain((engine) =>
  fc.tuple(fc.constant(engine), fc.oneof(version, fc.tuple(fc.constant(engine[0]), fc.nat(20), fc.nat(20)))),
);
const text = ([major, minor, patch]: [number, number, number]) => `${major}.${minor}.${patch}`;

it("a backend loads exactly when it has the engine's major version and at most its minor version; a refusal names both", () => {
  const seen = { compatible: 0, refused: 0, refusedForMinor: 0 };
  fc.assert(
    fc.property(pair, ([engine, backend]) => {
      const verdict = contractCompatibility(text(engine), text(backend));
      const expected = engine[0] === backend[0] && backend[1] <= engine[1];
      expect(verdict.compatible).toBe(expected);
      if (verdict.compatible) {
        seen.compatible++;
        return;
      }
      seen.refused++;
      if (engine[0] === backend[0]) seen.refusedForMinor++;
      expect(verdict.why).toContain(`backend contract ${text(backend)}`);
      expect(verdict.why).toContain(`backend contract ${text(engine)}`);
    }),
    { numRuns: 2_000 },
  );
  // Both verdicts, and refusals of a newer minor version within the same major one, are reached often.
  expect(seen.compatible).toBeGreaterThan(200);
  expect(seen.refused).toBeGreaterThan(200);
  expect(seen.refusedForMinor).toBeGreaterThan(200);
});

it("patch versions never decide", () => {
  const verdicts = { compatible: 0, refused: 0 };
  fc.assert(
    fc.property(pair, fc.nat(20), ([engine, backend], patch) => {
      const moved: [number, number, number] = [backend[0], backend[1], patch];
      const compatible = contractCompatibility(text(engine), text(backend)).compatible;
      expect(contractCompatibility(text(engine), text(moved)).compatible).toBe(compatible);
      verdicts[compatible ? "compatible" : "refused"]++;
    }),
    { numRuns: 500 },
  );
  // A patch version is shown not to decide either verdict.
  expect(verdicts.compatible).toBeGreaterThan(50);
  expect(verdicts.refused).toBeGreaterThan(50);
});
