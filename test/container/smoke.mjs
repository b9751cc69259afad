// Tests what can be tested of the container image without a container engine: the build context that
// .dockerignore lets through, and that `npm ci --omit=dev` plus the built output starts the server, as the
// image's last stage does. Prints `N passed, N failed`.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'sw-image-'));
let passed = 0;
let failed = 0;
const check = (ok, what) => {
  console.log(`${ok ? 'ok' : 'not ok'} - ${what}`);
  if (ok) passed += 1;
  else failed += 1;
};

let server;
try {
  // 1. The build context: the Containerfile's COPY sources are all in it, and nothing secret or bulky is.
  const context = readFileSync(join(root, '.dockerignore'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('!'))
    .map((l) => l.slice(1));
  const copied = [...readFileSync(join(root, 'Containerfile'), 'utf8').matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) =>
    m[1].split(' '),
  );
  check(
    copied.every((c) => context.includes(c)),
    `the build context holds every COPY source (${copied.join(', ')})`,
  );
  check(
    !context.some((c) => /certs|node_modules|\.git|generated/.test(c)),
    'no certificates, node_modules or .git in the context',
  );

  // 2. The last stage: production dependencies only, plus the built output and the schemas.
  for (const p of ['package.json', 'package-lock.json']) cpSync(join(root, p), join(work, p));
  execFileSync('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: work, stdio: 'pipe' });
  cpSync(join(root, 'dist'), join(work, 'dist'), { recursive: true });
  cpSync(join(root, 'schemas'), join(work, 'schemas'), { recursive: true, filter: (s) => !s.endsWith('.mjs') });
  check(
    !existsSync(join(work, 'node_modules/typescript')) && !existsSync(join(work, 'node_modules/tap')),
    'no dev dependencies installed',
  );
  execFileSync(
    process.execPath,
    [join(work, 'dist/main.js'), 'certs', '--out', join(work, 'certs'), '--service', 'localhost', '--namespace', 'x'],
    { stdio: 'pipe' },
  );
  const port = 18000 + Math.floor(Math.random() * 1000);
  server = spawn(
    process.execPath,
    [
      join(work, 'dist/main.js'),
      'serve',
      `--tls-cert-file=${join(work, 'certs/tls.crt')}`,
      `--tls-private-key-file=${join(work, 'certs/tls.key')}`,
      `--port=${port}`,
      '--bind-address=127.0.0.1',
      `--classes-from=${join(root, 'test/fixtures/classes')}`,
      '--shutdown-delay=0',
    ],
    { cwd: work, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KUBECONFIG: '', NODE_ENV: 'production' } },
  );
  const ca = readFileSync(join(work, 'certs/ca.crt'));
  const ready = await new Promise((resolve) => {
    const deadline = Date.now() + 15_000;
    const poll = () => {
      const req = request(
        { host: '127.0.0.1', port, path: '/readyz', ca, servername: 'localhost.x.svc', timeout: 1000 },
        (res) => {
          res.resume();
          if (res.statusCode === 200) resolve(true);
          else retry();
        },
      );
      req.on('error', retry);
      req.end();
    };
    const retry = () => (Date.now() > deadline ? resolve(false) : setTimeout(poll, 200));
    poll();
  });
  check(ready, 'the production install starts and becomes ready');
} catch (error) {
  check(false, `container smoke: ${error.message}`);
} finally {
  server?.kill('SIGTERM');
  rmSync(work, { recursive: true, force: true });
}
console.log(`container: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
