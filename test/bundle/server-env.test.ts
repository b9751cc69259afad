// The servers the suites start run with the environment the suite means them to have. tap's process-info wrapper
// adds its `--import` to NODE_OPTIONS of every process a test spawns (test/helpers/exact-env.mjs); a server with
// it would run tap's module hooks under NODE_OPTIONS that no Deployment sets.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { startBuiltServer } from '../helpers/built-server.js';
import { deploymentEnv } from '../helpers/deployment.mjs';

const environ = (pid: number): Record<string, string> =>
  Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter((entry) => entry !== '')
      .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
  );

t.test("the built server's environment is the Deployment's runtime settings and nothing of tap's", async (t) => {
  t.match(process.env.NODE_OPTIONS ?? '', /--import=\S*processinfo/, "this test process has tap's --import, to leave out");
  const server = await startBuiltServer(t);
  const env = environ(server.child.pid as number);
  for (const [name, value] of Object.entries(deploymentEnv())) t.equal(env[name], value, `${name} as the Deployment sets it`);
  t.same(
    Object.keys(env).filter((name) => /TAP/.test(name)),
    [],
    'no variable of the test runner',
  );
  t.same(readFileSync(`/proc/${server.child.pid}/cmdline`, 'utf8').split('\0').slice(1, 3), ['dist/bundle/main.js', 'serve']);
  server.child.kill('SIGTERM');
});
