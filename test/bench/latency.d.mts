// Types of latency.mjs for the TypeScript suites.
export interface LatencySummary {
  readonly p50: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
  readonly mean: number;
}
export declare function latencySummary(latencies: number[]): LatencySummary;
