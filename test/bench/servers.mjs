// Starting and measuring the servers of the bench: ours (the built bundle, with the Deployment's Node
// settings), the upstream Go webhook it replaces (the peer), and a bare Node HTTPS server (the floor for memory
// and start-up). Every server listens on loopback, logs to a file, and is stopped by its pid.
import { spawn } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { fileURLToPath } from 'node:url';
import { deploymentArgs, deploymentEnv, gracePeriodMs } from '../helpers/deployment.mjs';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export { deploymentArgs, deploymentEnv, deploymentNodeOptions, memoryLimitMb } from '../helpers/deployment.mjs';
export const MAIN = `${ROOT}dist/bundle/main.js`;
const CLOCK_TICKS = 100; // USER_HZ on Linux: /proc/<pid>/stat counts CPU time in 1/100 s.

function readyzOk(port, ca, tryMs) {
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/readyz', ca, servername: 'localhost', agent: false, timeout: tryMs },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

/** Polls readyz every 5 ms, each try given `tryMs`; resolves with ms from `since` to the first 200. */
export async function waitReady(port, ca, since, timeoutMs = 30_000, tryMs = 1000) {
  while (performance.now() - since < timeoutMs) {
    if (await readyzOk(port, ca, tryMs)) return performance.now() - since;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`not ready within ${timeoutMs} ms on port ${port}`);
}

let nextPort = 19000 + Math.floor(Math.random() * 2000);

/**
 * The command line of a server: `kind` is 'ours' (a bundle's main.js, run by `node`), 'upstream' (the Go
 * binary, with a kubeconfig) or 'bare' (bare-https.mjs).
 */
export function serverCommand(
  kind,
  { certs, classes, port, kubeconfig, main = MAIN, node = process.execPath, upstream, extraArgs = [] },
) {
  if (kind === 'bare') return [node, [`${ROOT}test/bench/bare-https.mjs`, certs.cert, certs.key, String(port)]];
  if (kind === 'upstream') {
    return [
      upstream,
      [
        `--tls-cert-file=${certs.cert}`,
        `--tls-private-key-file=${certs.key}`,
        `--port=${port}`,
        `--kubeconfig=${kubeconfig}`,
        ...extraArgs,
      ],
    ];
  }
  // As the Deployment runs it; the bench's network namespace has only loopback, so its 0.0.0.0 is loopback here.
  const args = [main, ...deploymentArgs(certs, port)];
  if (kubeconfig) args.push(`--kubeconfig=${kubeconfig}`, '--namespace=default');
  else if (classes) args.push(`--classes-from=${classes}`);
  return [node, [...args, ...extraArgs]];
}

/**
 * The collections a server traced so far (`traceGc` of startServer): young (V8's scavenges) and full (V8's
 * mark-compacts; every Go collection, which is of the whole heap), and the main-thread pause of V8's, in ms.
 */
export function gcCounts(file) {
  const text = readFileSync(file, 'latin1');
  const pauses = [
    ...text.matchAll(/ ms: (?:Scavenge|Minor Mark-Sweep|Mark-Compact)\b.*?MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ /g),
  ];
  return {
    young: (text.match(/ ms: (?:Scavenge|Minor Mark-Sweep)\b/g) ?? []).length,
    full: (text.match(/ ms: Mark-Compact\b|^gc \d+ @/gm) ?? []).length,
    pauseMs: pauses.reduce((sum, m) => sum + Number(m[1]), 0),
  };
}

/** Collections and pause per 1,000 requests between two of a server's `gcs()` readings. */
export function gcsPerThousand(before, after, requests) {
  const per = (key) => ((after[key] - before[key]) * 1000) / requests;
  return { young: per('young'), full: per('full'), pauseUs: per('pauseMs') };
}

/**
 * Starts a server; resolves once /readyz answers 200, with its pid, start-to-ready time and admission URL. With
 * `traceGc`, the server logs each collection (Node's `--trace-gc`, Go's `GODEBUG=gctrace=1`) to a file of its own,
 * which `gcs()` counts.
 */
export async function startServer(kind, options) {
  const port = nextPort++;
  const [server, commandArgv] = serverCommand(kind, { ...options, port });
  // Node takes --trace-gc only on its command line, not in NODE_OPTIONS.
  const serverArgv = options.traceGc && kind !== 'upstream' ? ['--trace-gc', ...commandArgv] : commandArgv;
  const log = options.traceGc ? `${options.logFile}.${port}` : options.logFile;
  const out = openSync(log, 'a');
  // Ours with the Deployment's runtime settings (NODE_OPTIONS, GLIBC_TUNABLES); the others with none of them.
  const runtime = kind === 'ours' ? deploymentEnv() : { NODE_OPTIONS: '', GLIBC_TUNABLES: '' };
  const env = { ...process.env, KUBECONFIG: '', ...runtime, ...options.env };
  if (options.traceGc && kind === 'upstream') env.GODEBUG = 'gctrace=1';
  const started = performance.now();
  const child = spawn(server, serverArgv, { stdio: ['ignore', out, out], env });
  let readyMs;
  try {
    readyMs = await waitReady(port, readFileSync(options.certs.ca), started, options.readyTimeoutMs, options.readyTryMs);
  } catch (error) {
    // Never ready (it failed to start, or hangs): stopped here, by its pid, before the error goes up.
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGKILL');
    throw error;
  }
  return {
    kind,
    port,
    pid: child.pid,
    readyMs,
    url: `https://localhost:${port}${kind === 'upstream' ? '/volumesnapshot' : '/validate'}`,
    gcs: () => (options.traceGc ? gcCounts(log) : undefined),
    stop: () =>
      new Promise((resolve) => {
        const running = () => child.exitCode === null && child.signalCode === null;
        if (!running()) return resolve();
        child.once('exit', () => resolve());
        process.kill(child.pid, 'SIGTERM');
        // The Deployment's shutdown delay runs first, as in a pod; the kubelet's grace period bounds it.
        setTimeout(() => running() && process.kill(child.pid, 'SIGKILL'), gracePeriodMs()).unref();
      }),
  };
}

/** User and system CPU seconds in a /proc stat file: a process's (/proc/PID/stat) or one thread's (/proc/PID/task/TID/stat). */
export function statSeconds(file) {
  const fields = readFileSync(file, 'utf8').split(') ')[1].split(' ');
  return { user: Number(fields[11]) / CLOCK_TICKS, system: Number(fields[12]) / CLOCK_TICKS };
}

/** CPU seconds (user + system) a process has used, over all its threads. */
export function cpuSeconds(pid) {
  const { user, system } = statSeconds(`/proc/${pid}/stat`);
  return user + system;
}

/**
 * Runs a load against the server at `pid` and reads its CPU around exactly the load's measured window (all of it,
 * or with `warmup` its last `duration` seconds): per request, over all its threads and the kernel (/proc/PID/stat),
 * and on its main thread in user and in system time. `atWindow` is called when the window opens; what it returns
 * comes back as `atWindow` (a server's collections so far, say).
 */
export async function loadWithCpu(pid, options, atWindow = () => undefined) {
  const mainStat = `/proc/${pid}/task/${pid}/stat`;
  let start;
  const result = await runLoad(options, () => {
    start = { cpu: cpuSeconds(pid), main: statSeconds(mainStat), atWindow: atWindow() };
  });
  const cpu1 = cpuSeconds(pid);
  const main1 = statSeconds(mainStat);
  const per = (seconds) => (seconds * 1e6) / result.requests;
  return {
    ...result,
    atWindow: start.atWindow,
    cpuUsPerRequest: per(cpu1 - start.cpu),
    mainUserUs: per(main1.user - start.main.user),
    mainSystemUs: per(main1.system - start.main.system),
  };
}

/** The highest resident set size since the process started (VmHWM), in MB. */
export function peakRssMb(pid) {
  const kb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
  return Math.round((kb / 1024) * 10) / 10;
}

/** Resident set size in MB. */
export function rssMb(pid) {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
  return Math.round((kb / 1024) * 10) / 10;
}

/**
 * Runs the load generator as a separate process and returns its result; `onWindow` is called when its measured
 * window opens (load.mjs: at once, or after `warmup` seconds; the message takes well under a millisecond).
 */
export function runLoad(options, onWindow = () => undefined) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [`${ROOT}test/bench/load.mjs`, JSON.stringify(options)], {
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    child.on('message', (message) => message === 'window' && onWindow());
    let text = '';
    child.stdout.on('data', (c) => (text += c));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(text)) : reject(new Error(`load generator exited ${code}`))));
  });
}
