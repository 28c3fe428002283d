/**
 * The span every object of the engine's has in a trace, with ids derived from its uid, so each replica and
 * each restart names the same span, and objects link to each other with nothing stored but a `traceparent`
 * annotation where one object is made from another. Pure.
 */
import { hash } from "node:crypto";

/** A span's place in a trace (W3C Trace Context): 32 and 16 lowercase hex characters. */
export interface SpanIds {
  readonly traceId: string;
  readonly spanId: string;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
const INVALID_TRACE = "0".repeat(32);
const INVALID_SPAN = "0".repeat(16);

/** The ids a `traceparent` names; undefined when it is not a valid version-00 one (all-zero ids are invalid). */
export function parseTraceparent(value: string | undefined): SpanIds | undefined {
  const match = value === undefined ? null : TRACEPARENT.exec(value.trim());
  if (!match?.[1] || !match[2] || match[1] === INVALID_TRACE || match[2] === INVALID_SPAN) return undefined;
  return { traceId: match[1], spanId: match[2] };
}

/** The `traceparent` of a sampled span. */
export function formatTraceparent(ids: SpanIds): string {
  return `00-${ids.traceId}-${ids.spanId}-01`;
}

/**
 * The object's span: its span id from its uid, in the trace of the span it continues (`parent`), or, for an
 * object that continues none, in a trace of its own, also from its uid.
 */
export function objectSpanIds(uid: string, parent: SpanIds | undefined): SpanIds {
  // The one-shot hash: the same digest as createHash's, in half the time (it is once per object, on its first reconcile).
  const digest = hash("sha256", `openmcp-engine/${uid}`, "hex");
  return { traceId: parent?.traceId ?? digest.slice(0, 32), spanId: digest.slice(32, 48) };
}
