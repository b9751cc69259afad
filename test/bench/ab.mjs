// Back-to-back comparison of servers under the same load, for measuring a change on a noisy machine:
// all servers run at once (an idle one costs nothing), and short load bursts alternate between them, so a
// drift of the machine's speed touches every server alike; the ratios are taken per round.
//   node test/bench/ab.mjs [--rounds N] [--seconds S] NAME=SPEC ...
// SPEC: see parseServerSpec in servers.mjs, e.g. `nolog=ours,--log-level=warn`.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { prepareWork, requestMix } from './mix.mjs';
import { cpuSeconds, parseServerSpec, runLoad, startServer } from './servers.mjs';

const { values, positionals } = parseArgs({
  options: { rounds: { type: 'string' }, seconds: { type: 'string' } },
  allowPositionals: true,
});
const rounds = Number(values.rounds ?? 9);
const seconds = Number(values.seconds ?? 2);
const { work, certs, classes } = prepareWork('sw-ab-');
const bodies = join(work, 'bodies.json');
writeFileSync(bodies, JSON.stringify(requestMix()));

const sample = (pid) => ({ all: cpuSeconds(pid), main: cpuSeconds(pid, pid) });

const servers = [];
for (const arg of positionals) {
  const { name, kind, ...spec } = parseServerSpec(arg);
  const server = await startServer(kind, { certs, classes, logFile: join(work, `${name}.log`), ...spec });
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
