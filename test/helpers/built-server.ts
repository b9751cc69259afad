import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { devCertPaths, ensureDevCerts } from '../../src/certs/dev-certs.js';
import { deploymentEnv } from './deployment.mjs';
import { baseEnv, withExactEnv } from './exact-env.mjs';

export interface BuiltServer {
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  readonly port: number;
  readonly ca: Buffer;
  /** Everything the server has written to stdout so far. */
  output(): string;
}

/**
 * The built bundle (`dist/bundle/main.js serve`) as its own process on a loopback port, standalone with the
 * fixture classes and a fresh development certificate, with the Deployment's runtime settings (NODE_OPTIONS,
 * GLIBC_TUNABLES) and `options.env` as its whole environment; killed by its pid when the test ends.
 */
export async function startBuiltServer(
  t: Test,
  options: { args?: readonly string[]; env?: NodeJS.ProcessEnv } = {},
): Promise<BuiltServer> {
  const dir = mkdtempSync(join(tmpdir(), 'sw-built-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await ensureDevCerts(dir);
  const paths = devCertPaths(dir);
  const args = ['dist/bundle/main.js', 'serve', `--tls-cert-file=${paths.certFile}`, `--tls-private-key-file=${paths.keyFile}`];
  args.push('--port=0', '--bind-address=127.0.0.1', '--classes-from=test/fixtures/classes', ...(options.args ?? []));
  const env = { ...baseEnv(), ...deploymentEnv(), ...options.env };
  const child = spawn(...withExactEnv(process.execPath, args, env), { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')));
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const m = /"port":(\d+),"classes"/.exec(output);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', () => reject(new Error(`server exited: ${output.slice(-2000)}`)));
  });
  return { child, port, ca: readFileSync(paths.caFile), output: () => output };
}
