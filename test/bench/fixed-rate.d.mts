// Types of fixed-rate.mjs for the TypeScript suites.
export interface FixedRateResult {
  readonly requests: number;
  readonly rps: number;
  readonly duration: number;
  readonly latency: {
    readonly p50: number;
    readonly p99: number;
    readonly p999: number;
    readonly max: number;
    readonly mean: number;
  };
  readonly errors: number;
  readonly timeouts: number;
  readonly non2xx: number;
}
export declare function fixedRate(options: {
  url: string;
  ca: string;
  bodies: readonly string[];
  rate: number;
  duration: number;
  timeoutMs?: number;
}): Promise<FixedRateResult>;
