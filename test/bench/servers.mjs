// Starting and measuring the servers under test: ours (the built bundle) and the ceiling.
import { spawn } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const MAIN = `${ROOT}dist/bundle/main.js`;
const CLOCK_TICKS = 100; // USER_HZ on Linux: /proc/<pid>/stat counts CPU time in 1/100 s.

function readyzOk(port, ca) {
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/readyz', ca, servername: 'localhost', agent: false, timeout: 1000 },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on('error', () => resolve(false));
    req.end();
  });
}

/** Polls readyz every 5 ms; resolves with ms from `since` to the first 200. */
export async function waitReady(port, ca, since, timeoutMs = 30_000) {
  while (performance.now() - since < timeoutMs) {
    if (await readyzOk(port, ca)) return performance.now() - since;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`not ready within ${timeoutMs} ms on port ${port}`);
}

/**
 * Processes are not pinned to cores: pinning the server to one core (taskset) also confines V8's garbage
 * collector threads to it and measured our throughput 40% lower, which is not how a pod runs.
 */
const pinned = (_cpu, args) => [process.execPath, args];

let nextPort = 19000 + Math.floor(Math.random() * 2000);

/**
 * `NAME=SPEC` from the command line of the comparison scripts: SPEC is `ceiling`, `ours` (dist/bundle/main.js)
 * or `ours:PATH/main.js`, optionally followed by `,ARG,...` (server flags), e.g. `nolog=ours,--log-level=warn`.
 */
export function parseServerSpec(arg) {
  const name = arg.slice(0, arg.indexOf('='));
  const [kind, ...extraArgs] = arg.slice(arg.indexOf('=') + 1).split(',');
  const [base, main] = kind.split(':');
  return { name, kind: base, extraArgs, ...(main ? { main } : {}) };
}

/** The command line of a server process: `kind` is 'ours' (the bundle `main`) or 'ceiling'. */
export function serverArgs(kind, { certs, classes, port, extraArgs = [], main = MAIN }) {
  if (kind === 'ceiling') return [`${ROOT}test/bench/ceiling.mjs`, certs.cert, certs.key, String(port)];
  return [
    main,
    'serve',
    `--tls-cert-file=${certs.cert}`,
    `--tls-private-key-file=${certs.key}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    '--shutdown-delay=0',
    ...(classes ? [`--classes-from=${classes}`] : []),
    ...extraArgs,
  ];
}

/** Starts a server process: `kind` is 'ours' or 'ceiling'. Output goes to a log file, as a container runtime's would. */
export async function startServer(kind, { certs, classes, logFile, extraArgs = [], nodeArgs = [], env = {}, main = MAIN }) {
  const port = nextPort++;
  const args = serverArgs(kind, { certs, classes, port, extraArgs, main });
  const out = openSync(logFile, 'a');
  const started = performance.now();
  const [command, argv] = pinned(0, [...nodeArgs, ...args]);
  const child = spawn(command, argv, { stdio: ['ignore', out, out], env: { ...process.env, KUBECONFIG: '', ...env } });
  const readyMs = await waitReady(port, readFileSync(certs.ca), started);
  return {
    kind,
    port,
    pid: child.pid,
    readyMs,
    url: `https://localhost:${port}/validate`,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      }),
  };
}

/** CPU seconds (user + system) a process has used, or one of its threads (`thread`: its id, the pid for the main one). */
export function cpuSeconds(pid, thread) {
  const path = thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`;
  const fields = readFileSync(path, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** Resident set size in MB. */
export function rssMb(pid) {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
  return Math.round((kb / 1024) * 10) / 10;
}

/** Runs the load generator as a separate process and returns its result. */
export function runLoad(options) {
  return new Promise((resolve, reject) => {
    const [command, argv] = pinned(1, [`${ROOT}test/bench/load.mjs`, JSON.stringify(options)]);
    const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.on('data', (c) => (text += c));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(text)) : reject(new Error(`load generator exited ${code}`))));
  });
}
