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
  fc.assert(
    fc.property(pair, ([engine, backend]) => {
      const verdict = contractCompatibility(text(engine), text(backend));
      const expected = engine[0] === backend[0] && backend[1] <= engine[1];
      expect(verdict.compatible).toBe(expected);
      if (!verdict.compatible) {
        expect(verdict.why).toContain(`backend contract ${text(backend)}`);
        expect(verdict.why).toContain(`backend contract ${text(engine)}`);
      }
    }),
    { numRuns: 2_000 },
  );
});

it("patch versions never decide", () => {
  fc.assert(
    fc.property(pair, fc.nat(20), ([engine, backend], patch) => {
      const moved: [number, number, number] = [backend[0], backend[1], patch];
      expect(contractCompatibility(text(engine), text(moved)).compatible).toBe(
        contractCompatibility(text(engine), text(backend)).compatible,
      );
    }),
  );
});
