// Tests what can be tested of the container image without a container engine: the build context that
// .dockerignore lets through; that `npm ci --omit=dev` plus the built output starts the server; that what the
// image's last stage holds (package.json and dist/bundle, no node_modules) starts too; and that the image runs
// the Node the project pins.
// Prints `N passed, N failed`.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { check, summary } from '../helpers/checks.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'sw-image-'));
const servers = [];

function waitReady(port, ca) {
  return new Promise((resolve) => {
    const deadline = Date.now() + 15_000;
    const retry = () => (Date.now() > deadline ? resolve(false) : setTimeout(poll, 200));
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
    poll();
  });
}

/** Starts the server from `dir`; checks it becomes ready; resolves with what it logged. */
async function startsAndBecomesReady(dir, what) {
  const main = join(dir, 'dist/bundle/main.js');
  const certs = join(dir, 'certs');
  execFileSync(process.execPath, [main, 'certs', '--out', certs, '--service', 'localhost', '--namespace', 'x'], {
    stdio: 'pipe',
  });
  const port = 18000 + Math.floor(Math.random() * 1000);
  const args = [main, 'serve', `--tls-cert-file=${certs}/tls.crt`, `--tls-private-key-file=${certs}/tls.key`, `--port=${port}`];
  args.push('--bind-address=127.0.0.1', `--classes-from=${join(root, 'test/fixtures/classes')}`, '--shutdown-delay=0');
  const server = spawn(process.execPath, args, {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'ignore'],
    env: { ...process.env, KUBECONFIG: '', NODE_ENV: 'production' },
  });
  servers.push(server);
  let log = '';
  server.stdout.on('data', (chunk) => (log += chunk));
  check(await waitReady(port, readFileSync(join(certs, 'ca.crt'))), what);
  server.kill('SIGTERM');
  await new Promise((resolve) => server.once('exit', resolve));
  return log;
}

try {
  // 1. The build context: every COPY source of the Containerfile is in it; nothing secret or bulky is.
  const dockerignore = readFileSync(join(root, '.dockerignore'), 'utf8').split('\n');
  const context = dockerignore.filter((l) => l.startsWith('!')).map((l) => l.slice(1));
  const containerfile = readFileSync(join(root, 'Containerfile'), 'utf8');
  const copied = [...containerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1].split(' '));
  check(
    copied.every((c) => context.includes(c)),
    `the build context holds every COPY source (${copied.join(', ')})`,
  );
  check(
    !context.some((c) => /certs|node_modules|\.git|generated/.test(c)),
    'no certificates, node_modules or .git in the context',
  );

  // 2. Production dependencies only, plus the built output.
  const prod = join(work, 'prod');
  mkdirSync(prod);
  for (const p of ['package.json', 'package-lock.json']) cpSync(join(root, p), join(prod, p));
  execFileSync('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: prod, stdio: 'pipe' });
  cpSync(join(root, 'dist'), join(prod, 'dist'), { recursive: true });
  check(
    !existsSync(join(prod, 'node_modules/typescript')) && !existsSync(join(prod, 'node_modules/tap')),
    'no dev dependencies installed',
  );
  await startsAndBecomesReady(prod, 'npm ci --omit=dev plus the built output starts and becomes ready');

  // 3. The image's last stage: package.json and dist/bundle, no node_modules at all.
  const image = join(work, 'image');
  cpSync(join(root, 'package.json'), join(image, 'package.json'));
  cpSync(join(root, 'dist/bundle'), join(image, 'dist/bundle'), { recursive: true });
  await startsAndBecomesReady(image, 'the image content (dist/bundle, no node_modules) starts and becomes ready');

  // 4. One Node everywhere: the image's bases are the Node major of `engines` and of the pinned dev dependency.
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const major = /\d+/.exec(pkg.devDependencies.node)?.[0];
  const [build] = [...containerfile.matchAll(/^FROM (?:--platform=\S+ )?(\S+)/gm)].map((m) => m[1]);
  check(build?.includes(`node:${major}-`), `the Containerfile builds on Node ${major} (${build})`);
  // The image runs the pinned Node itself, one build per platform (src/packaging/runtime-node.ts).
  const runtime = Object.entries(pkg.runtimeNode ?? {});
  check(
    runtime.length > 0 && /^RUN node dist\/packaging\/runtime-node\.js /m.test(containerfile),
    `the image runs the pinned Node ${pkg.devDependencies.node} (${runtime.map(([p, n]) => `${p}: ${n.package}`).join(', ')})`,
  );
  check(pkg.engines.node.startsWith(`>=${major}.`), `engines says Node ${major} (${pkg.engines.node})`);
  check(process.versions.node.split('.')[0] === major, `this suite runs on the pinned Node (${process.version})`);
} catch (error) {
  check(false, `container smoke: ${error.message}`);
} finally {
  for (const server of servers) server.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
}
process.exit(summary('container'));
