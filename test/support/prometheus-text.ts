/** Reading samples out of a Prometheus text exposition (an engine's or an API server's /metrics). */

/** The value of the first sample of `name` carrying every one of `labels` (others may stand beside them); 0 when absent. */
export function sample(text: string, name: string, labels: Readonly<Record<string, string>> = {}): number {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  const line = text
    .split("\n")
    .find((l) =>
      l.startsWith(`${name}{`) || l.startsWith(`${name} `) ? wanted.every((w) => l.includes(w)) : false,
    );
  return line ? Number(line.split(" ").at(-1)) : 0;
}
