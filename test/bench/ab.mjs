// Back-to-back comparison of servers under the same load, for measuring a change on a noisy machine:
// all servers run at once (an idle one costs nothing), and short load bursts alternate between them, so a
// drift of the machine's speed touches every server alike; the ratios are taken per round.
//   node test/bench/ab.mjs [--rounds N] [--seconds S] NAME=SPEC ...
// SPEC: `ceiling`, `ours` (dist/bundle/main.js), or `ours:PATH/main.js`, optionally followed by `,ARG,...`
// (server flags), e.g. `nolog=ours,--log-level=warn`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { classManifests, requestMix } from './mix.mjs';
import { ROOT, runLoad, startServer } from './servers.mjs';

const { values, positionals } = parseArgs({
  options: { rounds: { type: 'string' }, seconds: { type: 'string' } },
  allowPositionals: true,
});
const rounds = Number(values.rounds ?? 9);
const seconds = Number(values.seconds ?? 2);
const work = mkdtempSync(join(tmpdir(), 'sw-ab-'));
execFileSync(process.execPath, [`${ROOT}dist/certs/ensure-dev-certs.js`, join(work, 'certs')], { stdio: 'ignore' });
const certs = { cert: join(work, 'certs/tls.crt'), key: join(work, 'certs/tls.key'), ca: join(work, 'certs/ca.crt') };
const classes = join(work, 'classes.yaml');
writeFileSync(classes, classManifests());
const bodies = join(work, 'bodies.json');
writeFileSync(bodies, JSON.stringify(requestMix()));

const TICKS = 100;
const cpuOf = (path) => {
  const f = readFileSync(path, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / TICKS;
};
const sample = (pid) => ({ all: cpuOf(`/proc/${pid}/stat`), main: cpuOf(`/proc/${pid}/task/${pid}/stat`) });

const servers = [];
for (const arg of positionals) {
  const name = arg.slice(0, arg.indexOf('='));
  const spec = arg.slice(arg.indexOf('=') + 1);
  const [kind, ...extraArgs] = spec.split(',');
  const [base, main] = kind.split(':');
  const server = await startServer(base, {
    certs,
    classes,
    logFile: join(work, `${name}.log`),
    extraArgs,
    ...(main ? { main } : {}),
  });
  await runLoad({ url: server.url, ca: certs.ca, bodies, connections: 16, duration: 3 });
  servers.push({ name, server, rows: [] });
}
for (let round = 0; round < rounds; round++) {
  for (let i = 0; i < servers.length; i++) {
    const s = servers[(i + round) % servers.length];
    const before = sample(s.server.pid);
    const load = await runLoad({ url: s.server.url, ca: certs.ca, bodies, connections: 16, duration: seconds });
    const after = sample(s.server.pid);
    s.rows.push({
      rps: load.rps,
      us: ((after.all - before.all) * 1e6) / load.requests,
      mainUs: ((after.main - before.main) * 1e6) / load.requests,
      errors: load.errors + load.non2xx + load.timeouts,
    });
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const fmt = (xs, d = 1) => `${median(xs).toFixed(d)} (${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)})`;
const [first] = servers;
for (const s of servers) {
  const ratio = (key) => s.rows.map((r, i) => (key === 'rps' ? r.rps / first.rows[i].rps : first.rows[i][key] / r[key]));
  console.log(
    `${s.name.padEnd(12)} rps ${fmt(s.rows.map((r) => r.rps))}  cpu µs/req ${fmt(s.rows.map((r) => r.us))}  main ${fmt(s.rows.map((r) => r.mainUs))}` +
      `  vs ${first.name}: rps ${fmt(ratio('rps'), 2)} cpu ${fmt(ratio('us'), 2)} main ${fmt(ratio('mainUs'), 2)}  errors ${s.rows.reduce((n, r) => n + r.errors, 0)}`,
  );
}
await Promise.all(servers.map((s) => s.server.stop()));
rmSync(work, { recursive: true, force: true });
