/**
 * `@kubernetes/client-node` loaded with only the API groups the engine calls. Its main entry loads every
 * generated API group of Kubernetes (one 7 MB module among 60) and all 757 model classes, whatever a
 * program uses: about 18 MB of the engine's RSS (measured: 107 → 89 MB for a bare import) for code the
 * engine never runs. Nothing in the package can be imported on its own (the configuration loader imports
 * the whole generated client), so `run` and `up` install a module hook before they load the engine that
 * serves four generated files lazier:
 *
 * - `gen/types/ObservableAPI.js` and `gen/types/ObjectParamAPI.js` keep the groups in {@link EAGER_APIS};
 *   every other group's class stays, as a stand-in that loads the complete module on first construction
 *   (a backend or an embedding program may use any group and gets the real client, just later);
 * - `gen/models/all.js` and `gen/models/ObjectSerializer.js` load a model class the first time it is used
 *   (the serializer's type table and the package's exports alike), not all of them at start.
 *
 * Guarantees: each file either changes as described or stays exactly as it is (a release of client-node
 * laid out otherwise is served unchanged); what a program sees through the package's exports behaves
 * the same. Caveats: the hooks apply to modules loaded after {@link useLeanClientNode}, in this process.
 */
import { readFileSync } from "node:fs";
import { registerHooks } from "node:module";
import { fileURLToPath } from "node:url";

/** The API groups the engine and its built-in backends construct: loaded at start, as always. */
export const EAGER_APIS: ReadonlySet<string> = new Set([
  "CoreV1Api",
  "CustomObjectsApi",
  "ApiextensionsV1Api",
  "RbacAuthorizationV1Api",
  "VersionApi",
]);

/** The generated files served lazier, and (suffix `.complete.js`) the untouched copy the stand-ins load. */
const GENERATED =
  /\/@kubernetes\/client-node\/dist\/gen\/(?:types\/(ObservableAPI|ObjectParamAPI)|models\/(ObjectSerializer|all))(\.complete)?\.js$/;

/** Lets an ES module load another synchronously (`require` of an ES module: Node ≥ 22.12). */
const REQUIRE = `import { createRequire as __createRequire } from "node:module";
const __require = __createRequire(import.meta.url);`;

/**
 * An API-types module with only {@link EAGER_APIS} in full. Each group is one section: an import of its
 * request factory (or its observable class), then its class; a section of another group becomes a class
 * that builds the same class of the complete module.
 */
export function withEagerApisOnly(source: string, file: string): string {
  const section =
    /^import \{ (?:Observable)?(\w+?)(?:RequestFactory, \w+)? \} from "\.\.?\/(?:apis\/\w+|ObservableAPI)\.js";$/;
  const lines: string[] = [];
  let eager = true;
  let deferred = 0;
  for (const line of source.split("\n")) {
    const group = section.exec(line)?.[1];
    if (group) eager = EAGER_APIS.has(group);
    if (eager) {
      lines.push(line);
      continue;
    }
    const name = /^export class (\w+) \{$/.exec(line)?.[1];
    if (name) {
      lines.push(
        `export class ${name} { constructor(...args) { return new (__complete().${name})(...args); } }`,
      );
      deferred++;
    }
  }
  if (deferred === 0) return source;
  return `${REQUIRE}
let __module;
const __complete = () => (__module ??= __require("./${file}.complete.js"));
${lines.join("\n")}`;
}

/** A stand-in for a model class that loads the class on first use: construction, statics, `instanceof`. */
const LAZY_CLASS = `const __lazy = (name) => {
  let loaded;
  const real = () => (loaded ??= __require(\`./\${name}.js\`)[name]);
  return new Proxy(function () {}, {
    construct: (_, args, newTarget) => Reflect.construct(real(), args, newTarget),
    apply: (_, self, args) => Reflect.apply(real(), self, args),
    get: (_, property) => Reflect.get(real(), property),
    has: (_, property) => property in real(),
    getPrototypeOf: () => Object.getPrototypeOf(real()),
  });
};`;

/** `gen/models/all.js` (`export * from '../models/X.js'` for each model) as lazy stand-ins. */
export function withLazyModelExports(source: string): string {
  let lazy = 0;
  const lines = source.split("\n").map((line) => {
    const name = /^export \* from '\.\.\/models\/(\w+)\.js';$/.exec(line)?.[1];
    if (!name) return line;
    lazy++;
    return `export const ${name} = __lazy("${name}");`;
  });
  return lazy === 0 ? source : `${REQUIRE}\n${LAZY_CLASS}\n${lines.join("\n")}`;
}

/**
 * `gen/models/ObjectSerializer.js` without its 757 model imports: its type table loads each class when it
 * is first looked up, and its re-exports of the models come from the lazy `all.js`.
 */
export function withLazyTypeTable(source: string): string {
  let entries = 0;
  const lines = source
    .split("\n")
    .filter((line) => !/^(?:import \{ \w+ \}|export \*) from '\.\.\/models\/\w+\.js';$/.test(line))
    .map((line) =>
      line.replace(/^ {4}"(\w+)": \1(,?)$/, (_, name: string, comma: string) => {
        entries++;
        return `    get "${name}"() { return __require("./${name}.js").${name}; }${comma}`;
      }),
    );
  return entries === 0 ? source : `${REQUIRE}\nexport * from "./all.js";\n${lines.join("\n")}`;
}

const INSTALLED = Symbol.for("openmcp-engine.lean-client-node");

/**
 * Installs the hooks (once per process). Call it before anything imports `@kubernetes/client-node`;
 * modules already loaded stay as they are.
 */
export function useLeanClientNode(): void {
  const global = globalThis as { [INSTALLED]?: true };
  if (global[INSTALLED] || typeof registerHooks !== "function") return;
  global[INSTALLED] = true;
  registerHooks({
    resolve(specifier, context, next) {
      // The stand-ins' `.complete.js`: no such file, the load hook serves the original under that name.
      if (specifier.endsWith(".complete.js") && context.parentURL && GENERATED.test(context.parentURL)) {
        return { url: new URL(specifier, context.parentURL).href, format: "module", shortCircuit: true };
      }
      return next(specifier, context);
    },
    load(url, context, next) {
      const match = url.startsWith("file:") ? GENERATED.exec(url) : null;
      if (!match) return next(url, context);
      const source = readFileSync(fileURLToPath(url.replace(/\.complete\.js$/, ".js")), "utf8");
      const [, types, models, complete] = match;
      const served = complete
        ? source
        : types
          ? withEagerApisOnly(source, types)
          : models === "all"
            ? withLazyModelExports(source)
            : withLazyTypeTable(source);
      return { format: "module", source: served, shortCircuit: true };
    },
  });
}
