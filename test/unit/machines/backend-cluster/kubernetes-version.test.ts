/** Version resolution: full, partial and absent requests against a profile's supported versions. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SupportedVersion } from "../../../../src/api/cluster-profile.ts";
import {
  compareVersions,
  resolveVersion,
} from "../../../../src/machines/backend-cluster/kubernetes-version.ts";

const profile: SupportedVersion[] = [
  { version: "1.33.3" },
  { version: "1.33.2", deprecated: true },
  { version: "1.32.7" },
  { version: "1.32.6", deprecated: true },
  { version: "1.31.11", deprecated: true },
];

describe("resolveVersion", () => {
  it("takes the newest non-deprecated version when none is asked for", () => {
    expect(resolveVersion(undefined, profile)).toEqual({
      kind: "accepted",
      version: "1.33.3",
      deprecated: false,
    });
  });

  it("takes a full version exactly, flagging a deprecated one", () => {
    expect(resolveVersion("1.32.6", profile)).toEqual({
      kind: "accepted",
      version: "1.32.6",
      deprecated: true,
    });
  });

  it("completes a partial version with the newest non-deprecated patch", () => {
    expect(resolveVersion("1.32", profile)).toEqual({
      kind: "accepted",
      version: "1.32.7",
      deprecated: false,
    });
    expect(resolveVersion("1.31", profile)).toEqual({
      kind: "accepted",
      version: "1.31.11",
      deprecated: true,
    });
  });

  it("rejects versions the profile does not offer, listing what it does", () => {
    const result = resolveVersion("1.30", profile);
    expect(result.kind).toBe("unsupported");
    expect(result.kind === "unsupported" && result.message).toContain("supported: 1.33.3, 1.33.2");
    expect(resolveVersion("latest", profile).kind).toBe("unsupported");
    expect(resolveVersion(undefined, []).kind).toBe("unsupported");
  });

  it("refuses to go below the running version", () => {
    const result = resolveVersion("1.32", profile, "1.33.3");
    expect(result).toMatchObject({ kind: "downgrade", version: "1.32.7" });
    expect(resolveVersion("1.33", profile, "1.32.7")).toMatchObject({ kind: "accepted", version: "1.33.3" });
  });

  const version = fc
    .tuple(fc.constant(1), fc.integer({ min: 25, max: 40 }), fc.integer({ min: 0, max: 15 }))
    .map((parts) => parts.join("."));
  const supported = fc.uniqueArray(fc.record({ version, deprecated: fc.boolean() }), {
    selector: (entry) => entry.version,
    maxLength: 8,
  });
  const request = fc.option(
    fc.oneof(
      version,
      version.map((v) => v.split(".").slice(0, 2).join(".")),
    ),
    { nil: undefined },
  );

  it("only ever accepts an offered version that matches the request and is not older than the running one", () => {
    fc.assert(
      fc.property(
        supported,
        request,
        fc.option(version, { nil: undefined }),
        (offered, requested, current) => {
          const result = resolveVersion(requested, offered, current);
          if (result.kind !== "accepted") return;
          const entry = offered.find((o) => o.version === result.version);
          expect(entry).toBeDefined();
          expect(result.deprecated).toBe(entry?.deprecated === true);
          if (requested) expect(`${result.version}.`.startsWith(`${requested}.`)).toBe(true);
          if (current) expect(compareVersions(result.version, current)).toBeGreaterThanOrEqual(0);
        },
      ),
    );
  });

  it("prefers a non-deprecated version whenever one matches", () => {
    fc.assert(
      fc.property(supported, request, (offered, requested) => {
        const result = resolveVersion(requested, offered);
        const matching = offered.filter((o) => !requested || `${o.version}.`.startsWith(`${requested}.`));
        if (matching.some((o) => !o.deprecated)) expect(result).toMatchObject({ deprecated: false });
      }),
    );
  });
});
