/**
 * Where a CPU profile's samples went, by the code that spent them: each sample is charged to the innermost
 * frame of its stack that lies in a file of the program (not Node's own `node:` modules, not V8's builtins),
 * so the HTTP/2 and socket work gRPC asks of Node is gRPC's, and `JSON.stringify` called by the engine is the
 * engine's. A figure that a loaded machine does not move (it slows every part alike), unlike CPU seconds. Pure.
 */
import type { CpuProfile } from "./engine-process.ts";

/** Who a sample is charged to. */
export type Owner =
  | "opentelemetry"
  | "grpc/protobuf"
  | "engine tracing"
  | "other program code"
  | "node internals"
  | "garbage collector"
  | "program (native)";

/** The owners that are tracing's: they run only when tracing is on. */
export const TRACING_OWNERS: readonly Owner[] = ["opentelemetry", "grpc/protobuf", "engine tracing"];

function ownerOf(url: string): Owner | undefined {
  if (url === "" || url.startsWith("node:")) return undefined;
  if (url.includes("/node_modules/@opentelemetry/")) return "opentelemetry";
  if (
    url.includes("/node_modules/@grpc/") ||
    url.includes("/node_modules/protobufjs/") ||
    url.includes("/node_modules/@protobufjs/")
  )
    return "grpc/protobuf";
  if (/\/runtime\/tracing\/[^/]+\.[jt]s$/.test(url)) return "engine tracing";
  return "other program code";
}

/** Samples per owner (idle samples left out) and their total. */
export function profileShares(profile: CpuProfile): { total: number; by: Map<Owner, number> } {
  const parent = new Map<number, number>();
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const owners = new Map<number, Owner | "idle">();
  const owner = (id: number): Owner | "idle" => {
    const known = owners.get(id);
    if (known) return known;
    const leaf = byId.get(id)?.callFrame.functionName;
    let found: Owner | "idle" | undefined =
      leaf === "(idle)"
        ? "idle"
        : leaf === "(garbage collector)"
          ? "garbage collector"
          : leaf === "(program)"
            ? "program (native)"
            : undefined;
    for (let at: number | undefined = id; found === undefined && at !== undefined; at = parent.get(at))
      found = ownerOf(byId.get(at)?.callFrame.url ?? "");
    const result = found ?? "node internals";
    owners.set(id, result);
    return result;
  };
  const by = new Map<Owner, number>();
  let total = 0;
  for (const sample of profile.samples) {
    const who = owner(sample);
    if (who === "idle") continue;
    by.set(who, (by.get(who) ?? 0) + 1);
    total++;
  }
  return { total, by };
}

/** The share (0–1) of non-idle samples spent in tracing's code. */
export function tracingShare(shares: { total: number; by: Map<Owner, number> }): number {
  const tracing = TRACING_OWNERS.reduce((sum, owner) => sum + (shares.by.get(owner) ?? 0), 0);
  return shares.total === 0 ? 0 : tracing / shares.total;
}

/** The functions (name, file and line) that spent the most samples themselves, for a look at the detail. */
export function hottest(profile: CpuProfile, owners: readonly Owner[], top: number): string[] {
  const self = new Map<string, number>();
  const counts = new Map<number, number>();
  for (const sample of profile.samples) counts.set(sample, (counts.get(sample) ?? 0) + 1);
  const wanted = new Set(owners);
  for (const node of profile.nodes) {
    const n = counts.get(node.id);
    const who = ownerOf(node.callFrame.url);
    if (!n || !who || !wanted.has(who)) continue;
    const key = `${node.callFrame.functionName || "(anonymous)"} ${node.callFrame.url.replace(/^.*\/node_modules\//, "")}`;
    self.set(key, (self.get(key) ?? 0) + n);
  }
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([key, n]) => `${String(n).padStart(6)}  ${key}`);
}
