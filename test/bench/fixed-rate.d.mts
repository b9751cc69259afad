// Types of fixed-rate.mjs for the TypeScript suites.
import type { LatencySummary } from './latency.mjs';

export interface FixedRateResult {
  readonly requests: number;
  readonly rps: number;
  readonly duration: number;
  readonly latency: LatencySummary;
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
