/** Names of the scheduler's Clusters: the same as the openMCP operator's scheduler gives (controller-utils' published vectors). */
import { describe, expect, it } from "vitest";
import {
  nameHash,
  perRequestClusterName,
  shortenName,
} from "../../../../src/machines/cluster-request/cluster-names.ts";

describe("nameHash (openMCP's NameHashSHAKE128Base32)", () => {
  it.each([
    { parts: ["example"], hash: "epgccknc" },
    { parts: ["default", "example"], hash: "fphxsdub" },
  ])("gives controller-utils' own test vector: $parts hash to $hash", ({ parts, hash }) => {
    expect(nameHash(...parts)).toBe(hash);
  });
});

describe("shortenName (openMCP's ShortenToXCharacters)", () => {
  it("keeps what fits, and cuts the rest to a head and --hash of the whole, as controller-utils' vectors say", () => {
    expect(shortenName("short", 100)).toBe("short");
    expect(shortenName("short1234567", 11)).toBe("s--j5gore3p");
    const long = "this-is-a-very-a-very-a-very-long-string-that-is-over-63-characters";
    expect(shortenName(long, 63)).toBe("this-is-a-very-a-very-a-very-long-string-that-is-over--6reoyp5o");
    expect(shortenName("shorter1234", 10)).toBeUndefined(); // no room for a head: openMCP errs too
  });
});

describe("perRequestClusterName", () => {
  it("names request sb-7gm0w/r0 with prefix mcp- as the openMCP operator did: mcp-tajefs4j", () => {
    expect(perRequestClusterName("mcp-", "sb-7gm0w", "r0")).toBe("mcp-tajefs4j");
  });

  it("stays within 63 characters up to a 55-character prefix, and refuses a longer one as openMCP does", () => {
    const longest = `${"p".repeat(54)}-`;
    const name = perRequestClusterName(longest, "team-a", "a-request-with-a-long-name");
    expect(name).toBe(`${longest}${nameHash("team-a", "a-request-with-a-long-name")}`);
    expect(name).toHaveLength(63);
    // Past 55 the hash would have to be cut below its 8 characters, which leaves no room: no name.
    expect(perRequestClusterName(`${"p".repeat(55)}-`, "team-a", "r")).toBeUndefined();
  });
});
