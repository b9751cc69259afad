// Writes docs/benchmarks.json (for comparing runs) and the results part of docs/benchmarks.md.
import { readFileSync, writeFileSync } from 'node:fs';
import { ROOT } from './servers.mjs';

export const r1 = (x) => (typeof x === 'number' ? Math.round(x * 10) / 10 : x);
const r2 = (x) => (typeof x === 'number' ? Math.round(x * 100) / 100 : x);
/** A figure's median (min–max); a ratio against the peer when the peer was missing is '—'. */
const cell = (s, round = r1) => (s === undefined ? '—' : `${round(s.median)} (${round(s.min)}–${round(s.max)})`);

/** The command line that ran a bench script, as it can be pasted into a shell (an argument with a space quoted). */
export function commandLine(script) {
  const args = process.argv.slice(2).map((a) => (/\s/.test(a) ? `"${a}"` : a));
  return `npm run ${script}${args.length > 0 ? ` -- ${args.join(' ')}` : ''}`;
}

/** Replaces the generated part of docs/benchmarks.md between `<!-- NAME:begin -->` and `<!-- NAME:end -->`. */
export function replaceBlock(name, lines) {
  const [begin, end] = [`<!-- ${name}:begin -->`, `<!-- ${name}:end -->`];
  const path = `${ROOT}docs/benchmarks.md`;
  const current = readFileSync(path, 'utf8');
  const start = current.indexOf(begin);
  const stop = current.indexOf(end);
  const block = [begin, ...lines, end].join('\n');
  writeFileSync(
    path,
    start >= 0 && stop > start ? current.slice(0, start) + block + current.slice(stop + end.length) : `${current}\n${block}\n`,
  );
}

/**
 * What a failed run's output says went wrong: its first error line (`Error: spawn etcd ENOENT` when etcd is not
 * installed), not the first line of a stack trace's frame (`node:events:505`); else its first line.
 */
export function failureLine(output) {
  return /^\w*Error\b.*$/m.exec(output)?.[0] ?? output.split('\n')[0];
}

/** The targets, each with its bound and why it is set there (docs/benchmarks.md explains them further). */
function targets(report) {
  const { ratios, results, cluster } = report;
  const bareIdle = results.bare.idleMb.median;
  const oursCluster = cluster?.variants?.find((v) => v.variant === 'ours');
  const rows = [
    [
      'throughput at saturation, ours / upstream',
      '≥ 1.1',
      ratios.throughputOursOverUpstream?.median >= 1.1,
      cell(ratios.throughputOursOverUpstream, r2),
    ],
    [
      'throughput at saturation, ours / bare Node HTTPS server',
      '≥ 0.85',
      ratios.throughputOursOverBare?.median >= 0.85,
      cell(ratios.throughputOursOverBare, r2),
    ],
    [
      'peak RSS at saturation, ours / memory limit',
      '≤ 0.8',
      ratios.peakRssOursOverLimit?.median <= 0.8,
      `${cell(ratios.peakRssOursOverLimit, r2)} (${r1(results.ours.peakRssMb.median)} of ${r1(report.memoryLimitMb)} MB)`,
    ],
    [
      'p99 latency at saturation, ours / upstream',
      '≤ 0.5',
      ratios.p99SaturationOursOverUpstream?.median <= 0.5,
      cell(ratios.p99SaturationOursOverUpstream, r2),
    ],
    [
      'p99 latency at 1,000 requests/s, ours / upstream',
      '≤ 1',
      ratios.p99At1000OursOverUpstream?.median <= 1,
      cell(ratios.p99At1000OursOverUpstream, r2),
    ],
    [
      'idle RSS standalone, ours − bare Node server (MB)',
      '≤ 12',
      ratios.idleMbOursMinusBare?.median <= 12,
      cell(ratios.idleMbOursMinusBare),
    ],
    oursCluster === undefined
      ? ['idle RSS in cluster mode, informers synced, ours − bare (MB)', '≤ 22', false, 'not measured']
      : [
          `idle RSS in cluster mode, informers synced, highest in the ${cluster.idleSeconds} s after ready, ours − bare (MB)`,
          '≤ 22',
          oursCluster.rssMb.median - bareIdle <= 22,
          `${r1(oursCluster.rssMb.median - bareIdle)} (${r1(oursCluster.rssMb.median)} − ${r1(bareIdle)})`,
        ],
    [
      'process start to ready, ours / bare',
      '≤ 1.5',
      ratios.startToReadyOursOverBare?.median <= 1.5,
      cell(ratios.startToReadyOursOverBare, r2),
    ],
  ];
  return [
    '| target | bound | measured: median (min–max) | |',
    '| --- | --- | --- | --- |',
    ...rows.map(
      ([what, bound, met, measured]) =>
        `| ${what} | ${bound} | ${measured} | ${measured === '—' ? 'not measured: no peer' : met ? 'met' : '**missed**'} |`,
    ),
  ];
}

function serverTable(report) {
  const { results } = report;
  const names = Object.keys(results);
  const row = (label, pick) => `| ${label} | ${names.map((n) => pick(results[n], n)).join(' | ')} |`;
  return [
    `| | ${names.join(' | ')} |`,
    `| --- | ${names.map(() => '---').join(' | ')} |`,
    row(`requests/s at saturation (${report.connections} connections)`, (r) => cell(r.rps)),
    row('latency at saturation p50 / p99 (ms)', (r) => `${r1(r.saturation.p50.median)} / ${cell(r.saturation.p99)}`),
    row('p99 at saturation with the connections opening, warm-up included (ms)', (r) => cell(r.saturation.p99WithOpening)),
    row(
      'latency at 1,000 requests/s p50 / p99 (ms, open loop)',
      (r) => `${r2(r.fixed1000.p50.median)} / ${cell(r.fixed1000.p99, r2)}`,
    ),
    row('server CPU per request (µs, all threads and the kernel)', (r) => cell(r.cpuUsPerRequest)),
    row(`matched mix (1.30+): requests/s at saturation (${report.connections} connections)`, (r) => cell(r.matched.rps)),
    row(
      'matched mix (1.30+): latency at saturation p50 / p99 (ms)',
      (r) => `${r1(r.matched.p50.median)} / ${cell(r.matched.p99)}`,
    ),
    row('matched mix (1.30+): server CPU per request (µs)', (r) => cell(r.matched.cpuUsPerRequest)),
    row('collections per 1,000 requests at saturation: young / full (Go: each of the whole heap)', (r) =>
      r.gcs ? `${r1(r.gcs.young.median)} / ${cell(r.gcs.full, r1)}` : '',
    ),
    row("V8's collection pauses on the main thread at saturation (µs per request)", (r, name) =>
      !r.gcs || name === 'upstream' ? '—' : cell(r.gcs.pauseUs, r1),
    ),
    row('peak RSS, start through saturation (MB)', (r) => cell(r.peakRssMb)),
    row('idle RSS after start (MB)', (r) => cell(r.idleMb)),
    row("idle RSS, standalone with the bench's classes from YAML (MB)", (r) =>
      r.idleMbManyClasses ? cell(r.idleMbManyClasses) : '',
    ),
    row('RSS after the load runs (MB)', (r) => cell(r.rssAfterLoadMb)),
    row('process start to ready (ms)', (r) => cell(r.startToReadyMs)),
    row('errors, timeouts, non-2xx', (r) => String(r.errors)),
  ];
}

export function writeReport(report) {
  writeFileSync(`${ROOT}docs/benchmarks.json`, `${JSON.stringify(report, null, 2)}\n`);
  const { machine, ratios, scaling, cluster } = report;
  const before =
    ratios.throughputBeforeOverUpstream === undefined
      ? []
      : [
          '',
          `The \`before\` server (${report.beforeNodeOptions === undefined ? 'an earlier build' : `NODE_OPTIONS=${report.beforeNodeOptions} alone`}; the same bench, the same run) against the same peer: throughput ${cell(ratios.throughputBeforeOverUpstream, r2)} of upstream's, CPU per request ${cell(ratios.cpuBeforeOverUpstream, r2)} of upstream's, peak RSS ${cell(ratios.peakRssBeforeOverLimit, r2)} of the memory limit, p99 at saturation ${cell(ratios.p99SaturationBeforeOverUpstream, r2)}, p99 at 1,000 requests/s ${cell(ratios.p99At1000BeforeOverUpstream, r2)}, start to ready ${cell(ratios.startToReadyBeforeOverBare, r2)} of the bare server's.`,
        ];
  replaceBlock('results', [
    report.peer === undefined
      ? `**The peer was missing** (${report.peerMissing}): ours is measured against the bare Node server only, and every ratio against upstream reads —.`
      : `Peer: ${report.peer}.`,
    `Machine: ${machine.cores} cores (${machine.cpu}), Node ${machine.node}, ${machine.date}. Command: \`${report.command}\`. Ours runs with the Deployment's runtime settings, ${Object.entries(
      report.runtimeEnv,
    )
      .map(([k, v]) => `\`${k}=${v}\``)
      .join(
        ' and ',
      )}, and info logs to a file; under load ours serves the bench's ${report.classCount} classes and upstream reads the same classes through its informer; idle memory and start to ready are standalone with the fixtures' ${report.fewClassCount} classes (what \`npm start\` serves).`,
    `Ours runs with the Deployment's arguments, read from manifests/base/deployment.yaml: \`${report.serveArgs}\`, plus \`--classes-from\` (the load runs without a cluster; cluster mode is measured below). Memory limit ${r1(report.memoryLimitMb)} MB (MB here are MiB, as /proc counts). Saturation is ${report.connections} keep-alive connections${report.saturated === undefined ? '' : `, where upstream stopped gaining: ${report.saturated.steps.map((x) => `${Math.round(x.rps)} requests/s with ${x.connections}`).join(', ')}`}. Each load at saturation opens its connections, runs ${report.warmUpSeconds} s to warm up and goes on for ${report.durationSeconds} s on the same connections, and only those last seconds are counted: requests/s, latency, CPU and collections (the open-loop load at 1,000 requests/s is counted whole).`,
    `CPU per request over all threads and the kernel (utime + stime of /proc/PID/stat): ours / upstream ${cell(ratios.cpuOursOverUpstream, r2)}, ours / bare ${cell(ratios.cpuOursOverBare, r2)}; p99 at saturation, ours / bare ${cell(ratios.p99SaturationOursOverBare, r2)}.`,
    `Each figure is the median of ${report.runs} runs, with (min–max). Ratios are taken within each run (the servers measured back to back, in rotating order) and their median is shown.`,
    '',
    ...targets(report),
    '',
    `p99 at saturation counted from the load's start, on a server just started: while the load's connections open (one TLS handshake each) and its warm-up runs, ours / upstream ${cell(ratios.p99SaturationWithOpeningOursOverUpstream, r2)}.`,
    '',
    `The targets are measured with the \`every-write\` mix: every snapshot write reaches the webhook, as with upstream's configuration and with ours before 1.30. With the \`matched\` mix, what the shipped matchConditions pass on from 1.30 on (contents and the class writes that make a default; captured from 1.36.2), in the same runs: throughput ours / upstream ${cell(ratios.matched.throughputOursOverUpstream, r2)}, ours / bare ${cell(ratios.matched.throughputOursOverBare, r2)}; p99 at saturation ours / upstream ${cell(ratios.matched.p99OursOverUpstream, r2)}; CPU per request ours / upstream ${cell(ratios.matched.cpuOursOverUpstream, r2)}.`,
    '',
    ...serverTable(report),
    ...before,
    '',
    ...(cluster?.variants ?? []).map(
      (v) =>
        `Cluster mode (real kube-apiserver, ${cluster.classes} classes, informers synced, run as a pod: the image's files as user 65532 under RuntimeDefault seccomp, the shipped ServiceAccount's token, no kubeconfig), ${v.variant}: RSS ${cell(v.rssMb)} MB (the highest of a reading a second in the ${cluster.idleSeconds} s after ready), start to ready ${cell(v.startToReadyMs)} ms.`,
    ),
    ...(cluster?.error ? [`Cluster mode: not measured: ${failureLine(cluster.error)}`] : []),
    '',
    '| classes in the cache | default-class decision p50 (µs) | p99 (µs) |',
    '| --- | --- | --- |',
    ...Object.entries(scaling).map(([n, s]) => `| ${Number(n).toLocaleString('en')} | ${r1(s.p50us)} | ${r1(s.p99us)} |`),
  ]);
}
