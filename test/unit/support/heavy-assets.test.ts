import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type HeavyStage, lastStageNeededBy, stagesNeededBy } from "../../support/heavy-assets.ts";

const heavyFiles = readdirSync(join(import.meta.dirname, "..", "..", "integration")).filter((name) =>
  name.endsWith(".heavy.test.ts"),
);

describe("the heavy assets' stages a file waits for", () => {
  it("are those it names, or the container toolchain for a file named nowhere", () => {
    expect(stagesNeededBy("/repo/test/integration/in-cluster.heavy.test.ts")).toEqual([
      "containers",
      "gardener",
    ]);
    expect(stagesNeededBy("/repo/test/integration/kind-pool.heavy.test.ts")).toEqual(["containers"]);
  });

  it("start a file at the latest stage it needs, in the order the stages are made", () => {
    expect(lastStageNeededBy("/repo/test/integration/in-cluster.heavy.test.ts")).toBe("gardener");
    expect(lastStageNeededBy("/repo/test/integration/capi-backend.heavy.test.ts")).toBe("capi");
    expect(lastStageNeededBy("/repo/test/integration/live-view.browser.heavy.test.ts")).toBe("chromium");
  });

  it("wait for Gardener only in the files that start gardener-apiserver, and for Chromium only in the browser's", () => {
    const waitingFor = (stage: HeavyStage) =>
      heavyFiles.filter((name) => stagesNeededBy(name).includes(stage)).sort();
    const startsGarden = heavyFiles.filter((name) =>
      /startGarden(erBackendWorld)?\(|--backend", "gardener"|gardener-apiserver/.test(
        readFileSync(join(import.meta.dirname, "..", "..", "integration", name), "utf8"),
      ),
    );
    expect(startsGarden).toContain("in-cluster.heavy.test.ts");
    expect(waitingFor("gardener")).toEqual(startsGarden.sort());
    expect(waitingFor("chromium")).toEqual(heavyFiles.filter((name) => name.includes(".browser.")).sort());
  });

  it("wait for Cluster API in every file that runs its managers (the --capi flag or the Cluster API stand-ins)", () => {
    const runsCapi = heavyFiles.filter((name) =>
      /"--capi"|startCapi(Stack|Manager|Management)\(/.test(
        readFileSync(join(import.meta.dirname, "..", "..", "integration", name), "utf8"),
      ),
    );
    expect(runsCapi).toContain("cli-up.heavy.test.ts");
    expect(runsCapi.filter((name) => !stagesNeededBy(name).includes("capi"))).toEqual([]);
  });
});
