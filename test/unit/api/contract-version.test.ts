import { describe, expect, it } from "vitest";
import { contractCompatibility, parseContractVersion } from "../../../src/api/contract-version.ts";

describe("contractCompatibility", () => {
  it.each([
    ["1.0.0", "1.0.0"],
    ["1.4.0", "1.2.7"],
    ["1.2.0", "1.2.9"],
  ])("an engine implementing %s loads a backend built for %s", (engine, backend) => {
    expect(contractCompatibility(engine, backend)).toEqual({ compatible: true });
  });

  it("refuses another major version, naming both and what to do", () => {
    const verdict = contractCompatibility("1.0.0", "2.0.0");
    expect(verdict).toEqual({
      compatible: false,
      why: "it was built for backend contract 2.0.0, this engine implements backend contract 1.0.0; major versions differ, so the contract changed in a way the backend cannot follow: use a release of the backend built for 1.x, or an engine implementing 2.x",
    });
  });

  it("refuses a newer minor version: the engine lacks what it added", () => {
    expect(contractCompatibility("1.1.3", "1.2.0")).toEqual({
      compatible: false,
      why: "it was built for backend contract 1.2.0, this engine implements backend contract 1.1.3, which lacks what 1.2 added: upgrade the engine to one implementing 1.2 or later",
    });
  });

  it.each([
    [undefined, "it exports no contractVersion"],
    ["1.0", 'it exports contractVersion "1.0"'],
    [1, "it exports contractVersion 1"],
    ["01.0.0", 'it exports contractVersion "01.0.0"'],
  ])("refuses a module whose contractVersion is %j", (given, start) => {
    const verdict = contractCompatibility("1.0.0", given);
    expect(verdict.compatible).toBe(false);
    expect(!verdict.compatible && verdict.why).toMatch(
      new RegExp(`^${start.replace(/[.()]/g, "\\$&")}; .*this engine implements 1\\.0\\.0`),
    );
  });

  it("parses only MAJOR.MINOR.PATCH", () => {
    expect(parseContractVersion("10.20.30")).toEqual([10, 20, 30]);
    expect(parseContractVersion("1.0.0-rc.1")).toBeUndefined();
    expect(parseContractVersion("v1.0.0")).toBeUndefined();
  });
});
