/** What a CloudProfile offers: classification, lifecycle stages, expiry, order; and a template's traits. */
import { describe, expect, it } from "vitest";
import {
  classificationAt,
  cloudProfileVersions,
  shootTemplateTraits,
} from "../../../src/providers/gardener-versions.ts";

const NOW = Date.parse("2026-06-01T00:00:00Z");
const profile = (versions: object[]) => ({ spec: { kubernetes: { versions } } });

describe("cloudProfileVersions", () => {
  it("offers supported and deprecated versions newest first (numerically), leaving out preview, expired and unclassified", () => {
    expect(
      cloudProfileVersions(
        profile([
          { version: "1.9.0", classification: "supported" },
          { version: "1.10.1", classification: "supported" },
          { version: "1.10.0", classification: "deprecated" },
          { version: "1.11.0", classification: "preview" },
          { version: "1.8.0", classification: "expired" },
          { version: "1.7.0" },
          { version: "1.12", classification: "supported" },
        ]),
        NOW,
      ),
    ).toEqual([{ version: "1.10.1" }, { version: "1.10.0", deprecated: true }, { version: "1.9.0" }]);
  });

  it("treats a version past its expirationDate as expired, whatever its classification", () => {
    const versions = [
      { version: "1.33.0", classification: "supported", expirationDate: "2026-05-31T23:59:59Z" },
      { version: "1.32.0", classification: "supported", expirationDate: "2026-06-02T00:00:00Z" },
    ];
    expect(cloudProfileVersions(profile(versions), NOW)).toEqual([{ version: "1.32.0" }]);
  });

  it("reads the lifecycle stage current at `now`: the last that has started, the first without a start", () => {
    const lifecycle = [
      { classification: "preview" },
      { classification: "supported", startTime: "2026-01-01T00:00:00Z" },
      { classification: "deprecated", startTime: "2026-07-01T00:00:00Z" },
      { classification: "expired", startTime: "2027-01-01T00:00:00Z" },
    ];
    const entry = { version: "1.34.0", lifecycle };
    expect(classificationAt(entry, Date.parse("2025-12-31T00:00:00Z"))).toBe("preview");
    expect(classificationAt(entry, NOW)).toBe("supported");
    expect(classificationAt(entry, Date.parse("2026-08-01T00:00:00Z"))).toBe("deprecated");
    expect(classificationAt(entry, Date.parse("2027-02-01T00:00:00Z"))).toBe("expired");
    expect(
      classificationAt(
        {
          version: "1.34.0",
          lifecycle: [{ classification: "supported", startTime: "2030-01-01T00:00:00Z" }],
        },
        NOW,
      ),
    ).toBe("unavailable");
  });

  it("offers nothing for a CloudProfile without versions or with a shape it does not know", () => {
    expect(cloudProfileVersions({}, NOW)).toEqual([]);
    expect(cloudProfileVersions({ spec: { kubernetes: { versions: "1.33.0" } } }, NOW)).toEqual([]);
    expect(cloudProfileVersions(undefined, NOW)).toEqual([]);
  });
});

describe("shootTemplateTraits", () => {
  it("says workerless when there are no worker pools, and names the infrastructure and region", () => {
    expect(shootTemplateTraits({ region: "local", provider: { type: "local" } })).toEqual([
      "workerless",
      "provider-local",
      "region-local",
    ]);
    expect(
      shootTemplateTraits({ region: "eu", provider: { type: "aws", workers: [{ name: "a" }] } }),
    ).toEqual(["provider-aws", "region-eu"]);
  });
});
