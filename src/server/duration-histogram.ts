import type { Metric, Registry } from 'prom-client';

interface Series {
  readonly resource: string;
  /** Observations per bucket (not cumulative); the last slot is above the top bound. */
  readonly counts: number[];
  sum: number;
  count: number;
}

/**
 * A histogram with one label, `resource`, kept in plain arrays and handed to prom-client's registry in the
 * form its own Histogram exports (the same text at /metrics). prom-client's `observe` validates and hashes the
 * labels and allocates on every call; here an observation is a Map lookup and a short loop, on the path of
 * every admission request. Exported through the registry's metric interface (`get`, `reset`), as prom-client's
 * own metric classes are.
 */
export class DurationHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  observe(resource: string, seconds: number): void {
    let series = this.series.get(resource);
    if (series === undefined) {
      series = { resource, counts: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 };
      this.series.set(resource, series);
    }
    let bucket = 0;
    while (bucket < this.bounds.length && seconds > this.bounds[bucket]!) bucket++;
    series.counts[bucket]!++;
    series.sum += seconds;
    series.count++;
  }

  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: unknown[] }> {
    const values: unknown[] = [];
    for (const { resource, counts, sum, count } of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += counts[i]!;
        values.push({ labels: { le, resource }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', resource }, value: count, metricName: `${this.name}_bucket` });
      values.push({ labels: { resource }, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels: { resource }, value: count, metricName: `${this.name}_count` });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }

  reset(): void {
    this.series.clear();
  }
}
