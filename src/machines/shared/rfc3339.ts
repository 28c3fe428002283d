/** Time as Kubernetes writes it in conditions: RFC 3339 in UTC, whole seconds. */

/** `1763719200123` → `2025-11-21T10:00:00Z`. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
}
