/**
 * The package ships the engine only: the stand-ins of `src/dev` are loaded with a dynamic import, and a command
 * that needs one says, when they are absent, that it needs a checkout of the repository.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { CheckoutNeededError, loadFromCheckout } from "../../../src/cli/from-checkout.ts";

const src = join(import.meta.dirname, "..", "..", "..", "src");

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

describe("loadFromCheckout", () => {
  it("returns the module when it is there", async () => {
    await expect(loadFromCheckout("up --capi", async () => ({ start: 1 }))).resolves.toEqual({ start: 1 });
  });

  it("names the command and the checkout it needs when the module is absent", async () => {
    const missing = Object.assign(new Error("Cannot find module '/pkg/dist/dev/up-stand-ins.js'"), {
      code: "ERR_MODULE_NOT_FOUND",
    });
    const loading = loadFromCheckout("up --capi", () => Promise.reject(missing));
    await expect(loading).rejects.toBeInstanceOf(CheckoutNeededError);
    await expect(loading).rejects.toThrow(
      "up --capi needs a checkout of the openmcp-engine repository: it runs development stand-ins (src/dev) that the package does not ship",
    );
  });

  it("lets any other failure through as it is", async () => {
    const failure = new Error("the module threw while loading");
    await expect(loadFromCheckout("up --capi", () => Promise.reject(failure))).rejects.toBe(failure);
  });
});

describe("the shipped code and src/dev", () => {
  const shipped = sourceFiles(src).filter((file) => !relative(src, file).startsWith("dev/"));

  it("imports src/dev nowhere but as types or with a dynamic import", () => {
    const staticImports = shipped.flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(/^import (?!type )[^;]*from "[^"]*\/dev\/[^"]*";/gm)].map(
        (match) => `${relative(src, file)}: ${match[0]}`,
      ),
    );
    expect(staticImports).toEqual([]);
  });

  it("keeps providers and the runtime free of src/dev, even as types", () => {
    const touching = shipped
      .filter((file) => /^(providers|runtime)\//.test(relative(src, file)))
      .filter((file) => /["'][^"']*\/dev\/[^"']*["']/.test(readFileSync(file, "utf8")))
      .map((file) => relative(src, file));
    expect(touching).toEqual([]);
  });
});
