// `npm start` as the README gives it, less its build step (the suite runs on the built bundle, and rebuilding
// dist/ under the other tests would break them): it serves, and Ctrl-C (SIGINT to the terminal's process group)
// ends it within a second. Port 0 is appended (the last flag wins) so that it cannot clash with a server already
// running on 8443.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import t from 'tap';

const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
const steps = (scripts.start ?? '').split(' && ');

t.test('the start script builds, makes the development certificate, then serves', async (t) => {
  t.equal(steps[0], 'npm run build --silent');
  t.match(steps.at(-1), /^node dist\/bundle\/main\.js serve /);
});

t.test('Ctrl-C of npm start stops the server cleanly within a second', async (t) => {
  const command = `${steps.slice(1).join(' && ')} --port=0`;
  const child = spawn('sh', ['-c', command], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const group = child.pid as number;
  t.teardown(() => {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {
      // Already gone.
    }
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  let exited = false;
  child.once('exit', () => (exited = true));
  const until = performance.now() + 15_000;
  while (!output.includes('serving admission reviews') && !exited && performance.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const serving = output.includes('serving admission reviews');
  t.ok(serving, `it serves\n${output}`);
  const signalled = performance.now();
  process.kill(-group, 'SIGINT');
  // Every process of the group (the shell and the server) gone: what the terminal waits for.
  const alive = (): boolean => {
    try {
      process.kill(-group, 0);
      return true;
    } catch {
      return false;
    }
  };
  while (alive() && performance.now() - signalled < 10_000) await new Promise((resolve) => setTimeout(resolve, 5));
  const ms = Math.round(performance.now() - signalled);
  t.notOk(alive(), 'every process of npm start has exited');
  t.ok(ms < 1000, `exited ${ms} ms after Ctrl-C`);
  t.match(output, /"msg":"stopped"/, 'the server shut down cleanly');
});
