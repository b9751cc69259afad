// Where a request's CPU goes: our server with the Deployment's NODE_OPTIONS and info logs to a file, under the
// bench's request mix at saturation, with V8's sampling profiler on (--cpu-prof). It runs the unbundled build
// (dist/main.js with node_modules), the same code as the bundle, so that each frame names its package. Prints
// the self time by package or part of the server, and the functions that take the most.
// `npm run bench:profile -- --connections 50 --duration 10`. The main thread only: GC helper threads and the
// kernel's TLS and socket time are outside it (the bench's CPU per request counts them).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { prepareWork, requestMix } from './mix.mjs';
import { ROOT, runLoad, startServer } from './servers.mjs';

const { values } = parseArgs({ options: { connections: { type: 'string' }, duration: { type: 'string' } } });
const connections = Number(values.connections ?? 50);
const duration = Number(values.duration ?? 10);
const { work, certs, classes } = prepareWork('sw-profile-');
const bodies = join(work, 'bodies.json');
writeFileSync(bodies, JSON.stringify(requestMix()));
const profiles = join(work, 'profiles');

const server = await startServer('ours', {
  certs,
  classes,
  logFile: join(work, 'server.log'),
  main: join(ROOT, 'dist/main.js'),
  env: { NODE_OPTIONS: `${(await import('./servers.mjs')).deploymentNodeOptions()} --cpu-prof --cpu-prof-dir=${profiles}` },
});
const load = { url: server.url, ca: certs.ca, bodies, connections };
await runLoad({ ...load, duration: 2 });
const result = await runLoad({ ...load, duration });
await server.stop();

const file = readdirSync(profiles).find((f) => f.endsWith('.cpuprofile'));
const profile = JSON.parse(readFileSync(join(profiles, file), 'utf8'));
const selfUs = new Map();
const interval = (profile.endTime - profile.startTime) / profile.samples.length;
const counts = new Map();
for (const id of profile.samples) counts.set(id, (counts.get(id) ?? 0) + 1);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
for (const [id, n] of counts) selfUs.set(id, n * interval);

/** What a frame belongs to: a package, the server's own code, Node's internals, or V8 (GC, idle, program). */
function part(frame) {
  const url = frame.url;
  if (url === '')
    return frame.functionName === '(idle)' ? '(idle)' : frame.functionName.startsWith('(') ? frame.functionName : 'native';
  if (url.startsWith('node:')) {
    const m = /^node:(internal\/)?([a-z_]+)/.exec(url);
    return `node:${m?.[2] ?? url}`;
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1];
  const own = /\/dist\/([a-z]+)\//.exec(url);
  return own ? `src/${own[1]}` : url;
}
const byPart = new Map();
const byFunction = new Map();
for (const [id, us] of selfUs) {
  const frame = byId.get(id).callFrame;
  const p = part(frame);
  byPart.set(p, (byPart.get(p) ?? 0) + us);
  const name = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\//, '')}:${frame.lineNumber + 1}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + us);
}
const busy = [...selfUs.values()].reduce((a, b) => a + b, 0) - (byPart.get('(idle)') ?? 0);
const perRequest = (us) => (us / result.requests).toFixed(2);
console.log(`${result.requests} requests at ${Math.round(result.rps)} req/s, ${connections} connections, ${duration} s`);
console.log(`main thread busy ${perRequest(busy)} µs per request (profile ${file})`);
console.log('\nself time by part, µs per request:');
for (const [p, us] of [...byPart].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`  ${perRequest(us).padStart(7)}  ${p}`);
console.log('\nfunctions, µs per request:');
for (const [f, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 30))
  console.log(`  ${perRequest(us).padStart(7)}  ${f}`);
console.log(`\nprofile kept in ${join(profiles, file)}`);
