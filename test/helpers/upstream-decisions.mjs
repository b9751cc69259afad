// What the upstream Go webhook v7.0.2 (the program this one replaces) decides for each admission fixture:
//   node test/helpers/upstream-decisions.mjs   -> prints { "<fixture>": { "allowed": bool, "message": "..." } }
// The real binary serves each fixture's class set (from a loopback stand-in for the apiserver) with the fixture's
// --prevent-volume-mode-conversion, and with --enable-volume-group-snapshot-webhook. It listens on every
// interface, so all of this runs in a private network namespace (`unshare -n`) where only loopback exists.
// Fixtures whose class cache is `unavailable` are left out: v7.0.2 opens no port until its cache synced.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeApiserver } from './fake-apiserver.mjs';
import { unpackTool } from './tools.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURES = `${ROOT}test/fixtures/`;
const DEADLINE_MS = 120_000;

if (process.env.SW_UPSTREAM_NETNS !== '1') {
  const inner = spawnSync(
    'unshare',
    ['-n', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, ...process.argv.slice(1)],
    { stdio: 'inherit', env: { ...process.env, SW_UPSTREAM_NETNS: '1' }, timeout: DEADLINE_MS },
  );
  process.exit(inner.status ?? 1);
}
setTimeout(() => {
  console.error('upstream-decisions: over its time limit');
  process.exit(1);
}, DEADLINE_MS).unref();

function filesUnder(dir) {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const full = join(dir, name);
      return statSync(full).isDirectory() ? filesUnder(full) : name.endsWith('.json') ? [full] : [];
    });
}

function post(port, ca, path, body) {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: 'POST', ca, servername: 'localhost', agent: false, timeout: 5000 },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode, text }));
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`no answer on ${path}`)));
    req.setHeader('content-type', 'application/json');
    req.end(body);
  });
}

async function waitReady(port, ca) {
  for (let i = 0; i < 400; i++) {
    const ok = await new Promise((resolve) => {
      const req = request({ host: '127.0.0.1', port, path: '/readyz', ca, servername: 'localhost', agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      });
      req.on('error', () => resolve(false));
      req.end();
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the upstream webhook did not become ready in 10 s');
}

/** Runs one upstream instance for one class set and flag value, and asks it about `fixtures`. */
async function decideWith(work, binary, certs, classSet, prevent, fixtures, port) {
  const classText = classSet === 'empty' ? '' : readFileSync(`${FIXTURES}class-sets/${classSet}.yaml`, 'utf8');
  const fake = await startFakeApiserver(classText, work);
  const child = spawn(
    binary,
    [
      `--tls-cert-file=${certs.cert}`,
      `--tls-private-key-file=${certs.key}`,
      `--port=${port}`,
      `--kubeconfig=${fake.kubeconfig}`,
      `--prevent-volume-mode-conversion=${prevent}`,
      '--enable-volume-group-snapshot-webhook',
    ],
    { stdio: 'ignore' },
  );
  const decisions = {};
  try {
    await waitReady(port, certs.ca);
    for (const { name, review } of fixtures) {
      const path = review.request.kind.group.startsWith('groupsnapshot.') ? '/volumegroupsnapshot' : '/volumesnapshot';
      const { status, text } = await post(port, certs.ca, path, JSON.stringify(review));
      const response = status === 200 ? JSON.parse(text).response : undefined;
      decisions[name] =
        response === undefined
          ? { allowed: false, message: `HTTP ${status}: ${text.trim().slice(0, 200)}` }
          : { allowed: response.allowed === true, message: response.status?.message ?? '' };
    }
  } finally {
    process.kill(child.pid, 'SIGKILL');
    await fake.close();
  }
  return decisions;
}

const work = mkdtempSync(join(tmpdir(), 'sw-upstream-'));
try {
  const binary = unpackTool('upstream-webhook', join(work, 'upstream-webhook'));
  execFileSync(process.execPath, [`${ROOT}dist/certs/ensure-dev-certs.js`, join(work, 'certs')], { stdio: 'ignore' });
  const certs = {
    cert: join(work, 'certs/tls.crt'),
    key: join(work, 'certs/tls.key'),
    ca: readFileSync(join(work, 'certs/ca.crt')),
  };
  const groups = new Map();
  for (const file of filesUnder(`${FIXTURES}admission`)) {
    const fixture = JSON.parse(readFileSync(file, 'utf8'));
    if (fixture.classes === 'unavailable') continue;
    const key = `${fixture.classes} ${fixture.options?.preventVolumeModeConversion ?? true}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push({ name: relative(FIXTURES, file), review: fixture.review });
  }
  const decisions = {};
  let port = 20443;
  for (const [key, fixtures] of groups) {
    const [classSet, prevent] = key.split(' ');
    Object.assign(decisions, await decideWith(work, binary, certs, classSet, prevent, fixtures, port++));
  }
  process.stdout.write(JSON.stringify(decisions, null, 1));
} finally {
  rmSync(work, { recursive: true, force: true });
}
