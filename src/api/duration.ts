/** Durations as Kubernetes and Go write them (`90s`, `1h30m`, `500ms`), in milliseconds. */

const unitMs: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
};
const whole = /^(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+$/;
const part = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g;

/** Parses a Go-style duration (`1h30m`, `2.5s`, `500ms`); undefined if it is not one. Plain `0` is zero. */
export function parseDuration(text: string): number | undefined {
  const value = text.trim();
  if (value === "0") return 0;
  if (!whole.test(value)) return undefined;
  let total = 0;
  for (const [, amount, unit] of value.matchAll(part)) total += Number(amount) * (unitMs[unit ?? "ms"] ?? 0);
  return Math.round(total);
}
