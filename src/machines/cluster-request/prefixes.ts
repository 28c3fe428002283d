/** Name prefixes granted on shared Clusters: none granted twice, none a prefix of another (design record). Pure. */
import { createHash } from "node:crypto";

/** Shortest prefix a request may propose. */
export const MIN_PREFIX_LENGTH = 3;
/** Longest prefix (a prefix leaves room for the name it starts). */
export const MAX_PREFIX_LENGTH = 20;

/** Lowercase base32 (RFC 4648 letters and digits 2–7): every character is valid in a prefix. */
const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";
/** Digest characters in a generated prefix: 35 bits, so prefixes granted by this function rarely block each other. */
const GENERATED_DIGEST_LENGTH = 7;
/**
 * First characters of generated prefixes: `p` marks one. The others exist only because taken prefixes are
 * read from annotations anyone may edit: a taken `p` would block every `p…` and loop forever.
 */
const LEADS = "pabcdefghijklmnoqrstuvwxyz0123456789";
/** Attempts per lead: far more than prefixes granted by this function ever need (each blocks few candidates). */
const ATTEMPTS_PER_LEAD = 64;

/** Whether one is a prefix of the other (equal ones collide too). */
export function prefixesCollide(a: string, b: string): boolean {
  return a.startsWith(b) || b.startsWith(a);
}

/** What makes `prefix` unusable, in words; undefined when it is usable. */
export function prefixProblem(prefix: string): string | undefined {
  if (prefix.length < MIN_PREFIX_LENGTH || prefix.length > MAX_PREFIX_LENGTH)
    return `it has ${prefix.length} characters, not ${MIN_PREFIX_LENGTH} to ${MAX_PREFIX_LENGTH}`;
  if (!/^[a-z0-9][a-z0-9-]*$/.test(prefix))
    return "a prefix has only lowercase letters, digits and '-', and starts with a letter or digit";
  return undefined;
}

/** Lowercase letters, digits and `-`, starting with a letter or digit, within the length bounds. */
export function validPrefix(prefix: string): boolean {
  return prefixProblem(prefix) === undefined;
}

/**
 * The prefix to grant: the proposed one when it is valid and collides with none taken; else a generated one.
 *
 * Flow: generated prefixes are `p` + 7 base32 characters of sha256(`<seed>:<attempt>`) + `-`, for attempts
 * 0, 1, …; the first that collides with none taken wins. Should 64 attempts not do, the lead `p` gives way to
 * `a`, `b`, … `9` (64 attempts each).
 *
 * Guarantees: deterministic; the result is valid; empty taken prefixes (dedicated Clusters grant "") are
 * ignored; terminates for any input.
 *
 * Caveats: the result collides with none taken unless the taken prefixes block every generated one, which
 * needs hand-written short prefixes covering every lead (`a`, `b`, …); then it is the first generated one.
 */
export function grantPrefix(input: {
  readonly proposed: string | undefined;
  readonly taken: readonly string[];
  readonly seed: string;
}): string {
  const taken = input.taken.filter((prefix) => prefix !== "");
  const free = (prefix: string) => !taken.some((other) => prefixesCollide(prefix, other));
  if (input.proposed !== undefined && validPrefix(input.proposed) && free(input.proposed)) {
    return input.proposed;
  }
  for (let attempt = 0; attempt < LEADS.length * ATTEMPTS_PER_LEAD; attempt++) {
    const candidate = generatedPrefix(input.seed, attempt);
    if (free(candidate)) return candidate;
  }
  return generatedPrefix(input.seed, 0);
}

/** Attempt `attempt` at a prefix for `seed`: lead, digest characters, `-`. */
function generatedPrefix(seed: string, attempt: number): string {
  const lead = LEADS[Math.floor(attempt / ATTEMPTS_PER_LEAD)] ?? "p";
  const digest = createHash("sha256").update(`${seed}:${attempt}`).digest();
  let text = lead;
  // Five bits of each byte: 32 equally likely characters.
  for (let i = 0; i < GENERATED_DIGEST_LENGTH; i++) text += BASE32[(digest[i] ?? 0) & 31];
  return `${text}-`;
}
