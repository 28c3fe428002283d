/** The live view's browser script names a resource by the engine's one object key. */
import { describe, expect, it } from "vitest";
import { objectKey } from "../../../src/api/object-key.ts";
import { LIVE_VIEW_SCRIPT } from "../../../src/views/live-view-script.ts";

/** The script's `label(resource)`, taken from the page's script text and run as it runs in the browser. */
function scriptLabel(): (resource: { namespace?: string; name: string }) => string {
  const source = /\nfunction label\(resource\) \{[\s\S]*?\n\}\n/.exec(LIVE_VIEW_SCRIPT)?.[0];
  if (!source) throw new Error("the live view script has no label(resource)");
  return new Function(`${source}; return label;`)();
}

describe("the live view script's key", () => {
  it("is objectKey: namespace/name for a namespaced object, name for a cluster-scoped one", () => {
    const label = scriptLabel();
    for (const metadata of [
      { namespace: "demo", name: "one" },
      { namespace: "team-a", name: "cluster.x" },
      { name: "cluster-scoped" },
    ]) {
      expect(label(metadata)).toBe(objectKey({ metadata }));
    }
  });
});
