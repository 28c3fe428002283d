/** Name prefixes granted on shared Clusters: none granted twice, none a prefix of another (design record). Pure. */
import { createHash } from "node:crypto";

/** Shortest prefix a request may propose. */
export const MIN_PREFIX_LENGTH = 3;
/** Longest prefix (a prefix leaves room for the name it starts). */
export const MAX_PREFIX_LENGTH = 20;

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";

/** Whether one is a prefix of the other (equal ones collide too). */
export function prefixesCollide(a: string, b: string): boolean {
  return a.startsWith(b) || b.startsWith(a);
}

/** Lowercase letters, digits and `-`, starting with a letter or digit, within the length bounds. */
export function validPrefix(prefix: string): boolean {
  return (
    prefix.length >= MIN_PREFIX_LENGTH &&
    prefix.length <= MAX_PREFIX_LENGTH &&
    /^[a-z0-9][a-z0-9-]*$/.test(prefix)
  );
}

/**
 * The proposed prefix when it is valid and collides with none taken; else one derived from `seed`
 * (`p` + 7 base32 characters of a digest + `-`), the first of attempts 0, 1, … that collides with none.
 */
export function grantPrefix(input: {
  readonly proposed: string | undefined;
  readonly taken: readonly string[];
  readonly seed: string;
}): string {
  const taken = input.taken.filter((prefix) => prefix !== "");
  const free = (prefix: string) => !taken.some((other) => prefixesCollide(prefix, other));
  if (input.proposed !== undefined && validPrefix(input.proposed) && free(input.proposed))
    return input.proposed;
  for (let attempt = 0; ; attempt++) {
    const digest = createHash("sha256").update(`${input.seed}:${attempt}`).digest();
    let generated = "p";
    for (let i = 0; i < 7; i++) generated += BASE32[(digest[i] ?? 0) & 31];
    generated += "-";
    if (free(generated)) return generated;
  }
}
