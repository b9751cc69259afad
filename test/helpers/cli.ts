import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { baseEnv, withExactEnv } from './exact-env.mjs';

const MAIN = fileURLToPath(new URL('../../dist/bundle/main.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built `snapshot-webhook` (npm test builds first) as its own process, in the project folder,
 * bounded in time (`timeoutMs`) and output (`maxBuffer`, spawnSync's default unless given), with this process's
 * PATH and HOME and `env` as its whole environment (exact-env.mjs).
 */
export function runCli(
  args: readonly string[],
  input?: string,
  env: NodeJS.ProcessEnv = {},
  { timeoutMs = 60_000, maxBuffer }: { timeoutMs?: number; maxBuffer?: number } = {},
): CliResult {
  const [command, commandArgs] = withExactEnv(process.execPath, [MAIN, ...args], { ...baseEnv(), KUBECONFIG: '', ...env });
  const result = spawnSync(command, commandArgs, {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: timeoutMs,
    ...(maxBuffer === undefined ? {} : { maxBuffer }),
    ...(input === undefined ? {} : { input }),
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
