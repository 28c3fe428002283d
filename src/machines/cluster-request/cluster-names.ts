/**
 * Names of the Clusters the scheduler makes: deterministic, and the same as the openMCP operator's
 * scheduler gives (controller-utils' NameHashSHAKE128Base32 and ShortenToXCharacters), so a landscape that
 * switches schedulers, or a request that lost its status, finds the same Cluster instead of making a second.
 */
import { createHash } from "node:crypto";
import type { PurposeMapping } from "../../api/scheduler-config.ts";

/** Longest name a Cluster may get (a DNS-1123 label, so it can name things on the cluster too). */
export const MAX_CLUSTER_NAME_LENGTH = 63;
/** Bytes of SHAKE128 output: 40 bits, exactly 8 base32 characters. */
const HASH_BYTES = 5;
/** Characters of {@link nameHash}. */
export const NAME_HASH_LENGTH = 8;
/** RFC 4648 base32, lowercase (openMCP's `Base32EncodeStdLowerCase`), no padding. */
const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";
/** Longest per-request prefix: it leaves room for the 8-character hash within 63 characters. */
export const MAX_PER_REQUEST_PREFIX_LENGTH = MAX_CLUSTER_NAME_LENGTH - NAME_HASH_LENGTH;

/** Lowercase base32 of `bytes` without padding. */
function base32(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = "";
  for (const byte of bytes) {
    value = ((value << 8) | byte) & 0xfff; // at most 12 bits are ever pending
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** 8 lowercase base32 characters of SHAKE128 (5 bytes) over `parts` joined by `/` (openMCP's NameHashSHAKE128Base32). */
export function nameHash(...parts: readonly string[]): string {
  return base32(createHash("shake128", { outputLength: HASH_BYTES }).update(parts.join("/")).digest());
}

/**
 * `input` if it has at most `maxLength` characters, else its head and `--<nameHash(input)>` within
 * `maxLength` (openMCP's ShortenToXCharacters); undefined when `maxLength` leaves no room for a head.
 */
export function shortenName(input: string, maxLength: number): string | undefined {
  if (input.length <= maxLength) return input;
  const suffix = `--${nameHash(input)}`;
  const head = maxLength - suffix.length;
  return head > 0 ? `${input.slice(0, head)}${suffix}` : undefined;
}

/** A DNS-1123 label: what a Cluster's name and namespace must be. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** What makes `name` unusable as the name of a Cluster or its namespace (a DNS-1123 label); undefined when usable. */
export function clusterNameProblem(name: string): string | undefined {
  if (name.length > MAX_CLUSTER_NAME_LENGTH)
    return `"${name}" has ${name.length} characters; a Cluster name has at most ${MAX_CLUSTER_NAME_LENGTH}`;
  if (!DNS_LABEL.test(name))
    return `"${name}" is not a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit)`;
  return undefined;
}

/** What makes `prefix` unusable as the start of per-request Cluster names; undefined when usable. */
export function perRequestPrefixProblem(prefix: string): string | undefined {
  if (prefix.length > MAX_PER_REQUEST_PREFIX_LENGTH)
    return `the Cluster name prefix "${prefix}" has ${prefix.length} characters; at most ${MAX_PER_REQUEST_PREFIX_LENGTH} leave room for the 8-character hash within ${MAX_CLUSTER_NAME_LENGTH}`;
  if (!/^[a-z0-9][-a-z0-9]*$/.test(prefix))
    return `the Cluster name prefix "${prefix}" may hold only lowercase letters, digits and '-', and starts with a letter or digit`;
  return undefined;
}

/** The name prefix of per-request Clusters of a mapping: the template's generateName, else `<purpose>-`. */
export function perRequestPrefix(mapping: PurposeMapping, purpose: string): string {
  return mapping.template.metadata.generateName || `${purpose}-`;
}

/**
 * `<prefix><nameHash(namespace, name)>` of an Exclusive (or limited Shared) Cluster for one request, the
 * hash shortened so the whole stays within 63 characters, as openMCP does. Undefined when the prefix is
 * longer than 55 characters: openMCP refuses such a prefix too (the configuration check names it).
 */
export function perRequestClusterName(prefix: string, namespace: string, name: string): string | undefined {
  const hash = shortenName(nameHash(namespace, name), MAX_CLUSTER_NAME_LENGTH - prefix.length);
  return hash === undefined ? undefined : `${prefix}${hash}`;
}

/** The one Cluster of an unlimited Shared purpose: the template's name, else the purpose. */
export function singletonClusterName(mapping: PurposeMapping, purpose: string): string {
  return mapping.template.metadata.name || purpose;
}
