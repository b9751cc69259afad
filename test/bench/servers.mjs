// Starting and measuring the servers of the bench: ours (the built bundle, with the Deployment's Node
// settings), the upstream Go webhook it replaces (the peer), and a bare Node HTTPS server (the floor for memory
// and start-up). Every server listens on loopback, logs to a file, and is stopped by its pid.
import { spawn } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const MAIN = `${ROOT}dist/bundle/main.js`;
const CLOCK_TICKS = 100; // USER_HZ on Linux: /proc/<pid>/stat counts CPU time in 1/100 s.

/** The Deployment's NODE_OPTIONS (manifests/base/deployment.yaml): ours runs in the bench as it ships. */
export function deploymentNodeOptions() {
  const docs = parseAllDocuments(readFileSync(`${ROOT}manifests/base/deployment.yaml`, 'utf8')).map((d) => d.toJS());
  const container = docs.find((d) => d?.kind === 'Deployment').spec.template.spec.containers[0];
  return container.env.find((e) => e.name === 'NODE_OPTIONS').value;
}

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

let nextPort = 19000 + Math.floor(Math.random() * 2000);

/**
 * The command line of a server: `kind` is 'ours' (a bundle's main.js, run by `node`), 'upstream' (the Go
 * binary, with a kubeconfig) or 'bare'.
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
  const args = [main, 'serve', `--tls-cert-file=${certs.cert}`, `--tls-private-key-file=${certs.key}`, `--port=${port}`];
  args.push('--bind-address=127.0.0.1', '--shutdown-delay=0');
  if (kubeconfig) args.push(`--kubeconfig=${kubeconfig}`, '--namespace=default');
  else if (classes) args.push(`--classes-from=${classes}`);
  return [node, [...args, ...extraArgs]];
}

/** Starts a server; resolves once /readyz answers 200, with its pid, start-to-ready time and admission URL. */
export async function startServer(kind, options) {
  const port = nextPort++;
  const [command, argv] = serverCommand(kind, { ...options, port });
  const out = openSync(options.logFile, 'a');
  const env = { ...process.env, KUBECONFIG: '', NODE_OPTIONS: kind === 'ours' ? deploymentNodeOptions() : '', ...options.env };
  const started = performance.now();
  const child = spawn(command, argv, { stdio: ['ignore', out, out], env });
  const readyMs = await waitReady(port, readFileSync(options.certs.ca), started);
  return {
    kind,
    port,
    pid: child.pid,
    readyMs,
    url: `https://localhost:${port}${kind === 'upstream' ? '/volumesnapshot' : '/validate'}`,
    stop: () =>
      new Promise((resolve) => {
        const running = () => child.exitCode === null && child.signalCode === null;
        if (!running()) return resolve();
        child.once('exit', () => resolve());
        process.kill(child.pid, 'SIGTERM');
        setTimeout(() => running() && process.kill(child.pid, 'SIGKILL'), 5000).unref();
      }),
  };
}

/** CPU seconds (user + system) a process has used. */
export function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
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
    const child = spawn(process.execPath, [`${ROOT}test/bench/load.mjs`, JSON.stringify(options)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let text = '';
    child.stdout.on('data', (c) => (text += c));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(text)) : reject(new Error(`load generator exited ${code}`))));
  });
}
