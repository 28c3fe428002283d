/** The example backend of docs/write-a-backend.md passes the conformance kit and loads by path. */
import { join } from "node:path";
import { expect, it } from "vitest";
import { createBackend } from "../../../docs/examples/file-backend.ts";
import { checkBackendConformance } from "../../../src/providers/conformance.ts";
import { loadBackendFactory } from "../../../src/providers/registry.ts";

it("passes the conformance kit", async () => {
  await checkBackendConformance(createBackend, {
    numRuns: 30,
    readyTimeoutMs: 2_000,
    context: { options: { readyAfterMs: "20" } },
  });
}, 120_000);

it("loads with --backend ./docs/examples/file-backend.ts", async () => {
  const root = join(import.meta.dirname, "..", "..", "..");
  expect(await loadBackendFactory("./docs/examples/file-backend.ts", root)).toBeTypeOf("function");
});
