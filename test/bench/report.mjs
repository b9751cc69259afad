// Writes docs/benchmarks.json (for comparing runs) and the results part of docs/benchmarks.md.
import { readFileSync, writeFileSync } from 'node:fs';
import { ROOT } from './servers.mjs';

const r1 = (x) => (typeof x === 'number' ? Math.round(x * 10) / 10 : x);
const cell = (s) => `${r1(s.median)} (${r1(s.min)}–${r1(s.max)})`;
const BEGIN = '<!-- results:begin -->';
const END = '<!-- results:end -->';

export function writeReport(report) {
  writeFileSync(`${ROOT}docs/benchmarks.json`, `${JSON.stringify(report, null, 2)}\n`);
  const { results: r, memory: m, scaling, cluster, machine, instructions: ins } = report;
  const pct = (x) => r1(x * 100);
  const pctCell = (s) => `${pct(s.median)}% (${pct(s.min)}–${pct(s.max)})`;
  const lines = [
    BEGIN,
    `Machine: ${machine.cores} cores (${machine.cpu}), Node ${machine.node}, ${machine.date}. Command: \`${report.command}\`.`,
    `Each figure is the median of ${report.runs} runs, with (min–max); each load run lasts ${report.durationSeconds} s with 16 keep-alive connections (saturation) or 10 at 1,000 requests/s. Ratios are taken within each run (the three servers measured back to back) and their median is shown.`,
    '',
    '| | ours | ceiling | ours / ceiling |',
    '| --- | --- | --- | --- |',
    `| requests/s at saturation | ${cell(r.ours.rps)} | ${cell(r.ceiling.rps)} | ${pctCell(r.paired.oursOverCeiling)} |`,
    `| latency at saturation p50 / p99 / p99.9 (ms) | ${r1(r.ours.saturation.p50.median)} / ${r1(r.ours.saturation.p99.median)} / ${r1(r.ours.saturation.p999.median)} | ${r1(r.ceiling.saturation.p50.median)} / ${r1(r.ceiling.saturation.p99.median)} / ${r1(r.ceiling.saturation.p999.median)} | |`,
    `| latency at 1,000 req/s p50 / p99 / p99.9 (ms, open loop) | ${r1(r.ours.fixed1000.p50.median)} / ${cell(r.ours.fixed1000.p99)} / ${r1(r.ours.fixed1000.p999.median)} | ${r1(r.ceiling.fixed1000.p50.median)} / ${r1(r.ceiling.fixed1000.p99.median)} / ${r1(r.ceiling.fixed1000.p999.median)} | |`,
    `| server CPU per request (µs) | ${cell(r.ours.cpuUsPerRequest)} | ${cell(r.ceiling.cpuUsPerRequest)} | ${pctCell(r.paired.cpuOursOverCeiling)} |`,
    `| throughput from CPU per request (ceiling CPU / ours) | | | ${pctCell(r.paired.cpuCeilingOverOurs)} |`,
    `| errors, timeouts, non-2xx | ${r.ours.errors} | ${r.ceiling.errors} | |`,
    '',
    `Logging one line per decision: ${cell(r.ours.rps)} requests/s with info logs to a file against ${cell(r.oursNoLog.rps)} with \`--log-level=warn\`: a cost of ${pctCell(r.paired.loggingCost)} of throughput (within each run); by server CPU per request, ${pctCell(r.paired.loggingCostCpu)}.`,
    ...(ins === undefined
      ? []
      : [
          '',
          `Instructions per request (valgrind callgrind, every thread of the server, user space; after ${ins.warm.toLocaleString('en')} requests of warm-up, counted over ${ins.requests.toLocaleString('en')}): ours ${Math.round(ins.ours).toLocaleString('en')}, ceiling ${Math.round(ins.ceiling).toLocaleString('en')}, ours without info logs ${Math.round(ins.oursNoLog).toLocaleString('en')}. Ceiling / ours: ${pct(ins.ceiling / ins.ours)}%; the decision log line: ${pct(1 - ins.oursNoLog / ins.ours)}% of ours.`,
        ]),
    '',
    '| memory and start | median (min–max) |',
    '| --- | --- |',
    `| standalone, idle after start (RSS MB) | ${cell(m.standaloneIdleMb)} |`,
    `| standalone, after ${m.loadRequests.toLocaleString('en')} requests (RSS MB) | ${cell(m.standaloneAfterLoadMb)} |`,
    `| standalone, process start to ready, ${m.classCount} classes (ms) | ${cell(m.standaloneStartToReadyMs)} |`,
    `| standalone, process start to ready, the fixtures' ${m.fewClassCount} classes (ms) | ${cell(m.standaloneFewClassesStartToReadyMs)} |`,
    ...(m.noCodeCacheFewClassesStartToReadyMs === undefined
      ? []
      : [
          `| the same, ${m.fewClassCount} classes, the bundle without its V8 code cache (ms) | ${cell(m.noCodeCacheFewClassesStartToReadyMs)} |`,
        ]),
    `| the bare ceiling, process start to ready (ms; Node's own floor on this machine) | ${cell(m.ceilingStartToReadyMs)} |`,
    ...(cluster?.variants ?? []).map(
      (v) =>
        `| cluster mode, informers synced (${cluster.classes} classes): ${v.variant} — RSS MB / start to ready ms | ${cell(v.rssMb)} / ${cell(v.startToReadyMs)} |`,
    ),
    ...(cluster?.error ? [`| cluster mode | not measured: ${cluster.error.split('\n')[0]} |`] : []),
    '',
    '| classes in the cache | default-class decision p50 (µs) | p99 (µs) |',
    '| --- | --- | --- |',
    ...Object.entries(scaling).map(([n, s]) => `| ${Number(n).toLocaleString('en')} | ${r1(s.p50us)} | ${r1(s.p99us)} |`),
    END,
  ];
  const path = `${ROOT}docs/benchmarks.md`;
  const current = readFileSync(path, 'utf8');
  const start = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  const next =
    start >= 0 && end > start
      ? current.slice(0, start) + lines.join('\n') + current.slice(end + END.length)
      : `${current}\n${lines.join('\n')}\n`;
  writeFileSync(path, next);
}
