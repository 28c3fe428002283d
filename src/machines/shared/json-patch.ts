/** RFC 6902 JSON patch operations as small immutable values, and the diff that makes them. */
import jsonPatch from "fast-json-patch"; // CommonJS: Node cannot see its named exports

const { applyPatch, compare, deepClone } = jsonPatch;

/** A JSON value as the API server stores it. */
export type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json };

/** One RFC 6902 operation (the subset the engine emits). */
export type PatchOperation =
  | { readonly op: "test"; readonly path: string; readonly value: Json }
  | { readonly op: "add"; readonly path: string; readonly value: Json }
  | { readonly op: "replace"; readonly path: string; readonly value: Json }
  | { readonly op: "remove"; readonly path: string };

/** Escapes one JSON-pointer segment: `~` → `~0`, `/` → `~1` (in that order, per RFC 6901). */
export function escapeSegment(segment: string | number): string {
  return String(segment).replaceAll("~", "~0").replaceAll("/", "~1");
}

/** Builds a JSON pointer from raw segments, escaping each, e.g. `["metadata","labels","a/b"]` → `/metadata/labels/a~1b`. */
export function pointer(...segments: ReadonlyArray<string | number>): string {
  return segments.map((segment) => `/${escapeSegment(segment)}`).join("");
}

/** Factories for {@link PatchOperation}s; paths are raw segments, escaped here. */
export const Patch = {
  test: (segments: ReadonlyArray<string | number>, value: Json): PatchOperation =>
    Object.freeze({ op: "test", path: pointer(...segments), value }),
  add: (segments: ReadonlyArray<string | number>, value: Json): PatchOperation =>
    Object.freeze({ op: "add", path: pointer(...segments), value }),
  replace: (segments: ReadonlyArray<string | number>, value: Json): PatchOperation =>
    Object.freeze({ op: "replace", path: pointer(...segments), value }),
  remove: (segments: ReadonlyArray<string | number>): PatchOperation =>
    Object.freeze({ op: "remove", path: pointer(...segments) }),
} as const;

/**
 * The operations that turn `before` into `after` (fast-json-patch's `compare`, whose paths are
 * RFC 6901-escaped). Empty when nothing differs, so callers can skip the write.
 */
export function diff(before: Json, after: Json): PatchOperation[] {
  return compare(before as object, after as object) as PatchOperation[];
}

/** `document` with `operations` applied, as a new value (the input is not touched). Throws if an operation fails. */
export function applied<T>(document: T, operations: readonly PatchOperation[]): T {
  if (operations.length === 0) return document;
  return applyPatch(deepClone(document), deepClone(operations), true, false).newDocument as T;
}
