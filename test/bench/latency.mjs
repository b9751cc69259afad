// A load's latencies (ms, each as measured) summed up with µs resolution: p50, p99, p99.9, max and mean.
// Shared by the closed-loop load (load.mjs) and the open-loop sender at a fixed rate (fixed-rate.mjs).

/** Sorts `latencies` in place; each quantile is the latency at that rank, rounded to the µs. */
export function latencySummary(latencies) {
  latencies.sort((a, b) => a - b);
  const us = (ms) => Math.round(ms * 1000) / 1000;
  const at = (q) => us(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))] ?? 0);
  return {
    p50: at(0.5),
    p99: at(0.99),
    p999: at(0.999),
    max: at(1),
    mean: latencies.length === 0 ? 0 : us(latencies.reduce((s, x) => s + x, 0) / latencies.length),
  };
}
