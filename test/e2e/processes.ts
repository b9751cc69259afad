import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const started = new Set<ChildProcess>();

/** Kills every process this suite started; also runs when the test process exits on a failure. */
export function stopAll(): void {
  for (const child of started) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  started.clear();
}
process.on('exit', stopAll);
// tap ends a file over its time limit with SIGTERM, on which Node exits without 'exit' handlers: stop them first.
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const)
  process.once(signal, () => {
    stopAll();
    process.kill(process.pid, signal);
  });

export interface Started {
  readonly child: ChildProcess;
  readonly output: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts a process whose output is kept (last 64 KiB) for failure messages. */
export function startProcess(command: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Started {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  started.add(child);
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-65_536);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return {
    child,
    output: () => output,
    stop: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) {
          started.delete(child);
          resolve(child.exitCode);
          return;
        }
        const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', (code) => {
          clearTimeout(force);
          started.delete(child);
          resolve(code);
        });
        child.kill(signal);
        // A process stopped by SIGSTOP (a frozen apiserver, a hung webhook) takes the signal only once continued.
        child.kill('SIGCONT');
      }),
  };
}

export interface Finished {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a command to its end without blocking the event loop (what else the test runs goes on meanwhile), bounded by
 * `timeoutMs`, and killed by stopAll if the test ends first.
 */
export function runToEnd(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<Finished> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, timeout: options.timeoutMs ?? 120_000 });
    started.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (status) => {
      started.delete(child);
      resolve({ status, stdout, stderr });
    });
  });
}

/** Whether a server can listen on 127.0.0.1:`port` now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * The low end of the kernel's ephemeral port range (32768 by default), read once. A port from port 0 lies inside it,
 * where any client connection may take it as its source port between this check and the bind of the server it is
 * for. That is the likely cause of a CI failure where etcd's client port came from port 0 and the apiserver then
 * waited 60 s on an etcd that was not there.
 */
const EPHEMERAL_LOW = ((): number => {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32_768;
  } catch {
    return 32_768;
  }
})();

/** A free loopback TCP port below the ephemeral range, at random so that test files running at once rarely meet. */
export async function freePort(): Promise<number> {
  const low = 10_000;
  const high = Math.max(EPHEMERAL_LOW, low + 1_000);
  for (let tries = 0; tries < 100; tries += 1) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free loopback port between ${low} and ${high} after 100 tries`);
}

/**
 * waitFor, given up as soon as `started` exits: a process that died while starting fails its wait at once, with
 * its exit code or signal, instead of at the deadline.
 */
export function waitWhileRunning(
  started: Started,
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const { child } = started;
  const gone = (): string | undefined =>
    child.exitCode === null && child.signalCode === null
      ? undefined
      : `the process exited (${child.exitCode ?? child.signalCode})`;
  return waitFor(what, check, timeoutMs, 100, gone);
}

/**
 * Polls until check() resolves true, or throws after the deadline with the reason; at once when `gone` gives a
 * reason to stop waiting.
 */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  everyMs = 100,
  gone: () => string | undefined = () => undefined,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    const reason = gone();
    if (reason !== undefined) throw new Error(`${what}: ${reason}`);
    try {
      if (await check()) return;
      last = undefined;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last === undefined ? '' : `: ${String(last)}`}`);
}
