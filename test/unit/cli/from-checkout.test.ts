/**
 * The package ships the engine only: the stand-ins of `src/dev` are loaded with a dynamic import, files of the
 * checkout (`deploy/`, `hack/`) are found through checkoutFile, and a command that needs either says, when it is
 * absent, that it needs a checkout of the repository.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import {
  CheckoutNeededError,
  checkoutFile,
  loadFromCheckout,
  packageFile,
} from "../../../src/cli/from-checkout.ts";

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

describe("checkoutFile", () => {
  it("finds a file of the checkout, from the repository's root", () => {
    expect(checkoutFile("deploy/base", "landscape up")).toBe(join(src, "..", "deploy", "base"));
    expect(checkoutFile("hack/containers/ensure.sh", "up --backend kind")).toBe(
      join(src, "..", "hack", "containers", "ensure.sh"),
    );
  });

  it("names the step, the file and the checkout it needs when the file is absent, as in the package", () => {
    const finding = () => checkoutFile("hack/nowhere/build.sh", "building the engine's image (no --image)");
    expect(finding).toThrow(CheckoutNeededError);
    expect(finding).toThrow(
      `building the engine's image (no --image) needs a checkout of the openmcp-engine repository: it uses hack/nowhere/build.sh, which the installed package does not ship (${join(src, "..", "hack", "nowhere", "build.sh")} is missing)`,
    );
  });
});

describe("the CLI and the repository's root", () => {
  it("finds shipped files from the same root", () => {
    expect(packageFile("crds")).toBe(join(src, "..", "crds"));
  });

  it("locates the root in from-checkout.ts only, so every file outside the package goes through checkoutFile", () => {
    const locating = sourceFiles(join(src, "cli"))
      .filter((file) => readFileSync(file, "utf8").includes("import.meta.dirname"))
      .map((file) => relative(src, file));
    expect(locating).toEqual(["cli/from-checkout.ts"]);
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
      // A module path that reaches into src/dev (`…/dev/…` quoted), not a shell's /dev/null in a script.
      .filter((file) => /["'][^"'\s]*\.\.\/dev\/[^"']*["']/.test(readFileSync(file, "utf8")))
      .map((file) => relative(src, file));
    expect(touching).toEqual([]);
  });
});
