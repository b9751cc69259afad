// Where a request's CPU goes: our server (the Deployment's arguments and NODE_OPTIONS, info logs to a file) and
// the bare Node HTTPS server (or, with `--against libraries`, the libraries floor of bench:budget, with the
// Deployment's NODE_OPTIONS too), one after the other, under the bench's request mix at saturation, with V8's
// sampling profiler on (--cpu-prof). Ours runs the unbundled build (dist/main.js with node_modules), the same
// code as the bundle, so that each frame names its package. Each server is loaded as the bench loads it: one set of
// keep-alive connections, 3 s of warm-up, then --duration seconds counted; only the samples of that window count,
// over its requests, so start-up, the connections' handshakes and code not yet compiled are left out (V8 stamps its
// samples with the monotonic clock that process.hrtime reads). Prints, per request, each server's main-thread time by
// package or part of the server (self time, and inclusive: every part on the stack of a sample), the difference
// between the two, and the functions that take the most.
// `npm run bench:profile -- --connections 50 --duration 10 [--against libraries]`. The main thread only: GC
// helper threads and the kernel's TLS and socket time are outside it (the bench's CPU per request counts them).
// The flame graph: each server's main-thread stacks in the folded format (one line per stack, frames joined by
// `;`, then its µs), the input of flamegraph.pl, inferno and speedscope, in the work folder it names; and the
// same tree printed top-down, pruned to the frames that take at least --flame-min µs per request.
// `--smoke` (CI): 10 connections, 1 s of warm-up and 1 s counted; checks that both servers answered and that the
// counted samples cover the window, prints `bench:profile: N passed, N failed` and removes its work folder.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { check, summary } from '../helpers/checks.mjs';
import { reexecInNetns } from '../helpers/netns.mjs';
import { prepareWork, requestMix } from './mix.mjs';
import { deploymentNodeOptions, loadWithCpu, ROOT, startServer, statSeconds } from './servers.mjs';

const { values } = parseArgs({
  options: {
    connections: { type: 'string' },
    duration: { type: 'string' },
    'flame-min': { type: 'string' },
    against: { type: 'string' },
    smoke: { type: 'boolean' },
  },
});
// Ours listens on every interface, as the Deployment runs it: only loopback exists in the namespace.
reexecInNetns((why) => console.error(`bench:profile: ${why}`));
const smoke = values.smoke === true;
const connections = Number(values.connections ?? (smoke ? 10 : 50));
const duration = Number(values.duration ?? (smoke ? 1 : 10));
const flameMin = Number(values['flame-min'] ?? 1.5);
// As the bench warms each server's connections before it counts (run.mjs).
const WARM_UP_S = smoke ? 1 : 3;
// What ours is set against: the bare server, or the libraries floor (bench:budget's fastify + pino + prom-client,
// unbundled here too), which leaves ours' own code as the difference.
const against = values.against ?? 'bare';
if (against !== 'bare' && against !== 'libraries') throw new Error('--against is bare or libraries');
const { work, certs, classes } = prepareWork('sw-profile-');
const bodies = join(work, 'bodies.json');
writeFileSync(bodies, JSON.stringify(requestMix()));

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
  if (own) return `src/${own[1]}`;
  if (url.includes('bare-https')) return 'bare-https.mjs';
  return url.includes('libraries-https') ? 'libraries-https.mjs' : url;
}

/** User and system CPU seconds by thread: the main thread, and the others by name (V8 workers, libuv). */
function threadCpu(pid) {
  const by = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const file = `/proc/${pid}/task/${tid}/stat`;
    const name = tid === String(pid) ? 'main' : /\((.*)\)/.exec(readFileSync(file, 'utf8'))[1].replace(/[\d#]+$/, '');
    const { user, system } = statSeconds(file);
    by[name] = by[name] ?? { user: 0, system: 0 };
    by[name].user += user;
    by[name].system += system;
  }
  return by;
}

/** Profiles one server under load; per request: self and inclusive µs by part, self µs by function. */
async function profileOf(kind) {
  const profiles = join(work, `profiles-${kind}`);
  const server = await startServer(kind, {
    certs,
    classes,
    logFile: join(work, `${kind}.log`),
    ...(kind === 'ours' ? { main: join(ROOT, 'dist/main.js') } : {}),
    ...(kind === 'libraries' ? { main: join(ROOT, 'test/bench/libraries-https.mjs') } : {}),
    env: { NODE_OPTIONS: `${kind === 'bare' ? '' : deploymentNodeOptions()} --cpu-prof --cpu-prof-dir=${profiles}` },
  });
  const load = { url: server.url, ca: certs.ca, bodies, connections, warmup: WARM_UP_S, duration };
  const now = () => Number(process.hrtime.bigint() / 1000n);
  const result = await loadWithCpu(server.pid, load, () => ({ threads: threadCpu(server.pid), at: now() }));
  const window = { from: result.atWindow.at, to: now() };
  const threads0 = result.atWindow.threads;
  const threads1 = threadCpu(server.pid);
  const threads = Object.fromEntries(
    Object.entries(threads1).map(([name, t]) => [
      name,
      {
        user: ((t.user - (threads0[name]?.user ?? 0)) * 1e6) / result.requests,
        system: ((t.system - (threads0[name]?.system ?? 0)) * 1e6) / result.requests,
      },
    ]),
  );
  await server.stop();
  const file = readdirSync(profiles).find((f) => f.endsWith('.cpuprofile'));
  const profile = JSON.parse(readFileSync(join(profiles, file), 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map();
  const inclusive = new Map();
  const functions = new Map();
  const atNode = new Map();
  const add = (map, key, us) => map.set(key, (map.get(key) ?? 0) + us);
  // Each sample stands for the time since the one before it; only those inside the measured window count.
  let time = profile.startTime;
  let counted = 0;
  for (const [i, id] of profile.samples.entries()) {
    const interval = profile.timeDeltas[i];
    time += interval;
    if (time <= window.from || time > window.to) continue;
    counted += interval;
    const frame = byId.get(id).callFrame;
    add(atNode, id, interval);
    add(self, part(frame), interval);
    add(functions, `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\//, '')}:${frame.lineNumber + 1}`, interval);
    const onStack = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) onStack.add(part(byId.get(at).callFrame));
    for (const p of onStack) add(inclusive, p, interval);
  }
  // A node is one call path: its stack is named once, however many samples landed on it.
  const folded = new Map();
  for (const [id, us] of atNode)
    if (byId.get(id).callFrame.functionName !== '(idle)') add(folded, stackOf(id, byId, parent).join(';'), us);
  const profiled = result.requests;
  const per = (map) => new Map([...map].map(([k, us]) => [k, us / profiled]));
  const flameFile = join(work, `${kind}.folded`);
  writeFileSync(flameFile, [...folded].map(([stack, us]) => `${stack} ${Math.round(us)}`).join('\n') + '\n');
  const busy = ([...self.values()].reduce((a, b) => a + b, 0) - (self.get('(idle)') ?? 0)) / profiled;
  return {
    kind,
    rps: result.rps,
    failures: result.errors + result.timeouts + result.non2xx,
    coverage: counted / (window.to - window.from),
    cpuUs: result.cpuUsPerRequest,
    mainUs: result.mainUserUs + result.mainSystemUs,
    threads,
    busy,
    self: per(self),
    inclusive: per(inclusive),
    functions: per(functions),
    folded: per(folded),
    flameFile,
  };
}

/** A frame as a flame graph names it: function, file and line, and the part it belongs to. */
function frameName(frame) {
  const file = frame.url === '' ? '' : ` ${frame.url.replace(/^.*\//, '')}:${frame.lineNumber + 1}`;
  return `${frame.functionName || '(anonymous)'}${file} [${part(frame)}]`;
}

/** The frames of one sample, outermost first; the profile's (root) left out. */
function stackOf(id, byId, parent) {
  const stack = [];
  for (let at = id; at !== undefined; at = parent.get(at)) stack.push(frameName(byId.get(at).callFrame));
  return stack.reverse().slice(1);
}

/** The folded stacks as a top-down tree, children by time, pruned below `min` µs per request. */
function printFlame(folded, min) {
  const root = { us: 0, children: new Map() };
  for (const [stack, us] of folded) {
    let node = root;
    node.us += us;
    for (const name of stack.split(';')) {
      if (!node.children.has(name)) node.children.set(name, { us: 0, children: new Map() });
      node = node.children.get(name);
      node.us += us;
    }
  }
  const walk = (node, depth) => {
    for (const [name, child] of [...node.children].sort((a, b) => b[1].us - a[1].us)) {
      if (child.us < min) continue;
      console.log(`  ${child.us.toFixed(1).padStart(6)} ${'  '.repeat(depth)}${name}`);
      walk(child, depth + 1);
    }
  };
  walk(root, 0);
}

const ours = await profileOf('ours');
const peer = await profileOf(against);
const f = (x) => (x ?? 0).toFixed(2).padStart(7);
const top = (map, n) =>
  [...map]
    .filter(([k]) => k !== '(idle)')
    .sort((a, b) => b[1] - a[1])
    .slice(0, n);
for (const p of [ours, peer]) {
  console.log(
    `${p.kind}: ${Math.round(p.rps)} req/s at ${connections} connections; CPU ${p.cpuUs.toFixed(1)} µs per request (all threads and the kernel); main thread ${p.mainUs.toFixed(1)} µs by /proc, busy ${p.busy.toFixed(1)} µs in the profile`,
  );
}
console.log('\nCPU by thread, µs per request (user / system), from /proc/PID/task/*/stat:');
for (const p of [ours, peer])
  console.log(
    `  ${p.kind}: ${Object.entries(p.threads)
      .filter(([, t]) => t.user + t.system >= 0.05)
      .map(([name, t]) => `${name} ${t.user.toFixed(1)} / ${t.system.toFixed(1)}`)
      .join(', ')}`,
  );
console.log(`\nmain thread, µs per request: part, ours self, ${peer.kind} self, ours − ${peer.kind} self, ours inclusive`);
const parts = new Set([...top(ours.self, 25).map(([k]) => k), ...top(peer.self, 10).map(([k]) => k)]);
for (const k of [...parts].sort((a, b) => (ours.self.get(b) ?? 0) - (ours.self.get(a) ?? 0)))
  console.log(
    `  ${f(ours.self.get(k))} ${f(peer.self.get(k))} ${f((ours.self.get(k) ?? 0) - (peer.self.get(k) ?? 0))} ${f(ours.inclusive.get(k))}  ${k}`,
  );
console.log('\nours, functions by self time, µs per request:');
for (const [name, us] of top(ours.functions, 25)) console.log(`  ${f(us)}  ${name}`);
console.log(`\n${peer.kind}, functions by self time, µs per request:`);
for (const [name, us] of top(peer.functions, 10)) console.log(`  ${f(us)}  ${name}`);
for (const p of [ours, peer]) {
  console.log(
    `\n${p.kind}, flame graph of the main thread (inclusive µs per request, frames ≥ ${flameMin}); folded stacks: ${p.flameFile}`,
  );
  printFlame(p.folded, flameMin);
}
if (smoke) {
  for (const p of [ours, peer]) {
    check(p.rps > 0 && p.failures === 0, `${p.kind}: answered under the profiler, with no errors, timeouts or non-2xx answers`);
    // A clock that did not match V8's would leave the window without samples.
    check(
      p.coverage > 0.8 && p.coverage < 1.05,
      `${p.kind}: the counted samples cover the window (${Math.round(p.coverage * 100)}% of it)`,
    );
  }
  rmSync(work, { recursive: true, force: true });
  process.exit(summary('bench:profile'));
}
