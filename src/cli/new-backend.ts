/** `openmcp-engine new-backend <name>`: a backend package of its own, made from templates/backend. */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { BACKEND_CONTRACT_VERSION } from "../api/backend-contract.ts";
import { packageFile } from "./from-checkout.ts";
import { UsageError } from "./usage-error.ts";

export const newBackendUsage = `Usage: openmcp-engine new-backend <package-name> [flags]

Makes a backend package in a new folder: a typed backend over an in-memory stand-in for infrastructure that
passes the conformance kit as generated, its kit test (node --test), a README, and a tsconfig.json. Then:
  cd <folder> && npm install && npm test
Change it to drive your infrastructure; run the engine with it: openmcp-engine run --backend <package-name>

Flags:
  --directory <path>   where to make it (default: ./<package name without its scope>); must be new or empty
  --engine <spec>      the openmcp-engine dev dependency as npm takes it (default: ^<this engine's version>),
                       e.g. file:../openmcp-engine-0.1.0.tgz for an engine packed with npm pack
  -h, --help           show this help`;

const templateRoot = packageFile("templates/backend");

/** npm's rules for a package name (lowercase, URL-safe, optionally scoped, at most 214 characters). */
const packageNamePattern = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;

/** What the templates' placeholders become. */
export interface BackendScaffold {
  readonly packageName: string;
  /** The name ProviderConfigs give as `spec.backend`: the package name without its scope. */
  readonly backendName: string;
  readonly className: string;
  readonly engineDependency: string;
  readonly engineVersion: string;
  readonly contractVersion: string;
  /** The Node the package brings as a dev dependency (npm scripts run on it): the engine's own. */
  readonly nodeVersion: string;
}

/** The scaffold for `packageName`; throws a UsageError for a name npm would refuse. */
export function backendScaffold(packageName: string, engineDependency?: string): BackendScaffold {
  if (packageName.length > 214 || !packageNamePattern.test(packageName)) {
    throw new UsageError(
      `"${packageName}" is not an npm package name: lowercase letters, digits, '-', '.', '_', optionally @scope/`,
      newBackendUsage,
    );
  }
  const backendName = packageName.replace(/^@[^/]+\//, "");
  const words = backendName.split(/[^a-z0-9]+/).filter(Boolean);
  const pascal = words.map((word) => word[0]?.toUpperCase() + word.slice(1)).join("");
  const className = `${/^[0-9]/.test(pascal) ? "_" : ""}${pascal}${pascal.endsWith("Backend") ? "" : "Backend"}`;
  const manifest = JSON.parse(readFileSync(packageFile("package.json"), "utf8")) as {
    version: string;
    devDependencies?: Record<string, string>;
  };
  const engineVersion = manifest.version;
  return {
    packageName,
    backendName,
    className,
    engineDependency: engineDependency ?? `^${engineVersion}`,
    engineVersion,
    contractVersion: BACKEND_CONTRACT_VERSION,
    nodeVersion: manifest.devDependencies?.node ?? BROUGHT_NODE,
  };
}

/**
 * The Node a scaffold brings when the engine's package.json names none (a packed engine keeps its devDependencies
 * in package.json, so this is a fallback): the one the engine is tested on.
 */
const BROUGHT_NODE = "24.21.0";

/** A template's text with its placeholders filled. */
export function fillTemplate(text: string, scaffold: BackendScaffold): string {
  return text
    .replaceAll("__PACKAGE_NAME__", scaffold.packageName)
    .replaceAll("__BACKEND_NAME__", scaffold.backendName)
    .replaceAll("__CLASS_NAME__", scaffold.className)
    .replaceAll("__ENGINE_DEPENDENCY__", scaffold.engineDependency)
    .replaceAll("__ENGINE_VERSION__", scaffold.engineVersion)
    .replaceAll("__CONTRACT_VERSION__", scaffold.contractVersion)
    .replaceAll("__NODE_VERSION__", scaffold.nodeVersion);
}

/** Every file under `folder`, relative to it. */
async function filesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(folder, join(entry.parentPath, entry.name)));
}

/** Writes the package into `directory` (new or empty); returns the files written. */
export async function writeBackendPackage(directory: string, scaffold: BackendScaffold): Promise<string[]> {
  if (existsSync(directory) && readdirSync(directory).length > 0) {
    throw new UsageError(`${directory} exists and is not empty; choose another --directory`, newBackendUsage);
  }
  const written: string[] = [];
  for (const file of (await filesUnder(templateRoot)).sort()) {
    // npm leaves .gitignore files out of packages, so the template keeps it as _gitignore.
    const target = file === "_gitignore" ? ".gitignore" : file;
    await mkdir(join(directory, target, ".."), { recursive: true });
    await writeFile(
      join(directory, target),
      fillTemplate(await readFile(join(templateRoot, file), "utf8"), scaffold),
    );
    written.push(target);
  }
  return written;
}

/** Runs `new-backend`. */
export async function newBackend(args: string[]): Promise<void> {
  let parsed: ReturnType<typeof parseNewBackendArgs>;
  try {
    parsed = parseNewBackendArgs(args);
  } catch (error) {
    throw error instanceof UsageError ? error : new UsageError((error as Error).message, newBackendUsage);
  }
  const [name, ...extra] = parsed.positionals;
  if (name === undefined) throw new UsageError("give the package name of the new backend", newBackendUsage);
  if (extra.length > 0)
    throw new UsageError(`one package name, not ${parsed.positionals.length}`, newBackendUsage);
  const scaffold = backendScaffold(name, parsed.values.engine);
  const directory = resolve(parsed.values.directory ?? scaffold.backendName);
  const files = await writeBackendPackage(directory, scaffold);
  const shown = relative(process.cwd(), directory) || ".";
  console.log(`Made backend package ${scaffold.packageName} in ${shown}: ${files.join(", ")}

Next:
  cd ${shown}
  npm install
  npm test                      # the conformance kit, as generated it passes
  npm run build                 # dist/, what the engine loads
  npx openmcp-engine run --provider-name <name> --backend ${scaffold.packageName}

ProviderConfigs served by it say spec.backend: ${scaffold.backendName}. See its README.md.`);
}

function parseNewBackendArgs(args: string[]) {
  return parseArgs({
    args,
    options: { directory: { type: "string" }, engine: { type: "string" } },
    strict: true,
    allowPositionals: true,
  });
}
