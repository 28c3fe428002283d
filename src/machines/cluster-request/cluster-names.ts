/** Names of the Clusters the scheduler makes: deterministic, so a lost status or a restart finds the same Cluster again. */
import { createHash } from "node:crypto";
import type { PurposeMapping } from "../../api/scheduler-config.ts";

/** Longest name a Cluster may get (a DNS-1123 label, so it can name things on the cluster too). */
const MAX_NAME_LENGTH = 63;
/** Characters of the digest at the end of a per-request name. */
const HASH_LENGTH = 8;
const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";

/** 8 lowercase base32 characters of sha256(`<namespace>/<name>`): the same request always gets the same name. */
export function requestDigest(namespace: string, name: string): string {
  const bytes = createHash("sha256").update(`${namespace}/${name}`).digest();
  let bits = 0;
  let value = 0;
  let out = "";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < HASH_LENGTH) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    if (out.length === HASH_LENGTH) break;
  }
  return out;
}

/** The name prefix of per-request Clusters of a mapping: the template's generateName, else `<purpose>-`. */
export function perRequestPrefix(mapping: PurposeMapping, purpose: string): string {
  return mapping.template.metadata.generateName || `${purpose}-`;
}

/**
 * `<prefix><digest>` of an Exclusive (or limited Shared) Cluster for one request; the prefix is cut
 * so the whole stays within 63 characters.
 */
export function perRequestClusterName(prefix: string, namespace: string, name: string): string {
  return `${prefix.slice(0, MAX_NAME_LENGTH - HASH_LENGTH)}${requestDigest(namespace, name)}`;
}

/** The one Cluster of an unlimited Shared purpose: the template's name, else the purpose. */
export function singletonClusterName(mapping: PurposeMapping, purpose: string): string {
  return mapping.template.metadata.name || purpose;
}
