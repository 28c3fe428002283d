/** Exclusive Cluster names as engines before openMCP's naming gave them: for tests that such Clusters are still found. */
import { createHash } from "node:crypto";

/** `<prefix>` + the first 8 lowercase base32 characters of sha256(`<namespace>/<name>`): the engine's former name. */
export function sha256ClusterName(prefix: string, namespace: string, name: string): string {
  const bytes = createHash("sha256").update(`${namespace}/${name}`).digest().subarray(0, 5);
  const bits = [...bytes].map((byte) => byte.toString(2).padStart(8, "0")).join("");
  const alphabet = "abcdefghijklmnopqrstuvwxyz234567";
  return `${prefix}${(bits.match(/.{5}/g) ?? []).map((chunk) => alphabet[Number.parseInt(chunk, 2)]).join("")}`;
}
