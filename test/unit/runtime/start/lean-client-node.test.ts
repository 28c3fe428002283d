/**
 * `@kubernetes/client-node` behind the lean hooks: the same exports, the same behaviour, fewer modules at
 * start. Each case runs in a fresh node process (hooks are per process), which reports what it saw.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import {
  withEagerApisOnly,
  withLazyModelExports,
  withLazyTypeTable,
} from "../../../../src/runtime/start/lean-client-node.ts";

const hooks = pathToFileURL(
  join(import.meta.dirname, "../../../../src/runtime/start/lean-client-node.ts"),
).href;

/** Runs `body` (an async module body that returns a JSON-able value) in a fresh node, lean or not. */
function inNode(body: string, lean: boolean): unknown {
  const script = `
    import { registerHooks } from "node:module";
    ${lean ? `const { useLeanClientNode } = await import(${JSON.stringify(hooks)}); useLeanClientNode();` : ""}
    const loaded = new Set();
    registerHooks({ load(url, context, next) { loaded.add(url); return next(url, context); } });
    const loadedNow = (part) => [...loaded].filter((url) => url.includes("/@kubernetes/client-node/dist/" + part)).length;
    const k = await import("@kubernetes/client-node");
    const result = await (async () => { ${body} })();
    console.log(JSON.stringify(result));`;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
    env: { ...process.env, NODE_OPTIONS: "" },
  });
  return JSON.parse(out.trim().split("\n").at(-1) ?? "null");
}

const kubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
users: [{name: u, user: {token: t}}]
current-context: c`;

describe("the lean client-node", () => {
  it("exports the same names as the package does", () => {
    const names = `return Object.keys(k).sort();`;
    const plain = inNode(names, false) as string[];
    expect(plain.length).toBeGreaterThan(800); // every API group and model is an export
    expect(inNode(names, true)).toEqual(plain);
  });

  it("loads no model and no API group the engine does not call until one is used, then the real one", () => {
    const seen = inNode(
      `const atStart = { models: loadedNow("gen/models/"), apis: loadedNow("gen/apis/") };
       const kc = new k.KubeConfig();
       kc.loadFromString(${JSON.stringify(kubeconfig)});
       const apps = kc.makeApiClient(k.AppsV1Api);
       const failure = await apps.listNamespacedDeployment({ namespace: "x" }).then(() => "none", (e) => String(e));
       const { ObjectSerializer } = await import("@kubernetes/client-node/dist/gen/models/ObjectSerializer.js");
       const secret = ObjectSerializer.deserialize(
         { metadata: { name: "s", creationTimestamp: "2026-01-01T00:00:00Z" }, data: { a: "YQ==" } }, "V1Secret");
       const made = new k.V1Secret();
       class Mine extends k.V1ObjectMeta {}
       return {
         atStart,
         appsLoaded: loadedNow("gen/apis/AppsV1Api.js"),
         failure,
         created: secret.metadata.creationTimestamp instanceof Date,
         secretClass: secret.constructor.name,
         instances: [secret instanceof k.V1Secret, made instanceof k.V1Secret, new Mine() instanceof k.V1ObjectMeta],
         attributes: k.V1Secret.getAttributeTypeMap().map((a) => a.name).includes("stringData"),
         modelsAfter: loadedNow("gen/models/"),
       };`,
      true,
    ) as Record<string, unknown>;
    // At start: the serializer and the export list, no model class; only the eager groups' request factories.
    expect(seen.atStart).toEqual({ models: 2, apis: 7 }); // 5 eager groups, baseapi.js, exception.js
    expect(seen.appsLoaded).toBe(1);
    expect(seen.failure).toMatch(/fetch failed|ECONNREFUSED/); // sent, through the real client
    expect(seen).toMatchObject({ created: true, secretClass: "V1Secret", attributes: true });
    expect(seen.instances).toEqual([true, true, true]);
    expect(seen.modelsAfter).toBeGreaterThan(2);
    expect(seen.modelsAfter).toBeLessThan(20);
  });

  it("serves a file laid out otherwise unchanged", () => {
    const other = "export class Something {}\n";
    expect(withEagerApisOnly(other, "ObservableAPI")).toBe(other);
    expect(withLazyModelExports(other)).toBe(other);
    expect(withLazyTypeTable(other)).toBe(other);
  });
});
