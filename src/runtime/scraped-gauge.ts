/**
 * Gauges that mirror live state: read at scrape time, never kept up to date by hand. Each scrape starts empty, so a
 * label set that is gone (a pool deleted, a reason no longer held) is no longer reported.
 */
import { Gauge, type Registry } from "prom-client";

/** A gauge's name, help and label names, as Prometheus shows them. */
export interface GaugeSpec<Label extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly Label[];
}

/** One value of a gauge at a scrape: its labels and the number. */
export type GaugeSample<Label extends string> = readonly [
  labels: Partial<Record<Label, string>>,
  value: number,
];

/** Registers a gauge into `registry` whose values are what `read` yields at each scrape. */
export function scrapedGauge<Label extends string>(
  registry: Registry,
  spec: GaugeSpec<Label>,
  read: () => Iterable<GaugeSample<Label>>,
): void {
  new Gauge({
    ...spec,
    registers: [registry],
    collect() {
      this.reset();
      for (const [labels, value] of read()) this.set(labels, value);
    },
  });
}

/**
 * Samples under `label` of how often each of `values` occurs, each of `known` included (0 when it does not occur)
 * so that a dashboard sees all of them.
 */
export function countsBy<Label extends string>(
  label: Label,
  values: Iterable<string>,
  known: Iterable<string> = [],
): GaugeSample<Label>[] {
  const counts = new Map<string, number>();
  for (const value of known) counts.set(value, 0);
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts].map(([value, count]) => [{ [label]: value } as Record<Label, string>, count]);
}
