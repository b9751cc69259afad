import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../dist/bundle/main.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built `snapshot-webhook` (npm test builds first) as its own process, in the project folder,
 * bounded in time.
 */
export function runCli(args: readonly string[], input?: string, env: NodeJS.ProcessEnv = {}): CliResult {
  const result = spawnSync(process.execPath, [MAIN, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, KUBECONFIG: '', ...env },
    ...(input === undefined ? {} : { input }),
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
