// Instructions per request, counted by valgrind's callgrind: about the same figure on a busy machine as on a
// quiet one (it counts work, not time). The same build measures within a few percent from run to run (when the
// JIT and the collector run still varies), so differences of some percent between builds show where timings
// drown in the machine's noise (docs/benchmarks.md).
// Counts user-space instructions of every thread of the server (V8's JIT code, GC helpers, OpenSSL); the
// kernel's share (loopback TCP, syscalls) is not counted and is about the same for every server.
//   node test/bench/instructions.mjs [--warm N] [--requests N] NAME=SPEC ...   (SPEC as for ab.mjs)
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { prepareWork, requestMix } from './mix.mjs';
import { MAIN, parseServerSpec, serverArgs, waitReady } from './servers.mjs';

export async function instructionsPerRequest({
  kind,
  main = MAIN,
  extraArgs = [],
  nodeArgs = [],
  warm,
  requests,
  work,
  certs,
  classes,
  bodies,
}) {
  const port = 23000 + Math.floor(Math.random() * 2000);
  const outDir = mkdtempSync(join(work, 'cg-'));
  const args = serverArgs(kind, { certs, classes, port, extraArgs, main });
  const out = openSync(join(outDir, 'server.log'), 'a');
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      `--callgrind-out-file=${outDir}/callgrind.out`,
      '--dump-instr=no',
      '--compress-strings=no',
      process.execPath,
      ...nodeArgs,
      ...args,
    ],
    { stdio: ['ignore', out, out], env: { ...process.env, KUBECONFIG: '' } },
  );
  try {
    await waitReady(port, readFileSync(certs.ca), performance.now(), 180_000);
    const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: readFileSync(certs.ca) });
    await send(agent, port, bodies, warm);
    execFileSync('callgrind_control', ['-z', String(child.pid)], { stdio: 'ignore' });
    await send(agent, port, bodies, requests);
    execFileSync('callgrind_control', ['-d', String(child.pid)], { stdio: 'ignore' });
    agent.destroy();
    const dump = readdirSync(outDir)
      .filter((f) => f.startsWith('callgrind.out.'))
      .sort()
      .at(-1);
    const text = readFileSync(join(outDir, dump), 'utf8');
    const total = Number(/^(?:summary|totals): (\d+)/m.exec(text)[1]);
    return total / requests;
  } finally {
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
  }
}

/** Sends `count` requests from the mix one after another over one keep-alive connection (the same order every run). */
async function send(agent, port, bodies, count) {
  let next = 0;
  const one = () =>
    new Promise((resolve, reject) => {
      const body = bodies[next++ % bodies.length];
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: '/validate',
          method: 'POST',
          agent,
          servername: 'localhost',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  while (next < count) await one();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    options: {
      warm: { type: 'string' },
      requests: { type: 'string' },
      keep: { type: 'boolean' },
      'node-flags': { type: 'string' },
    },
    allowPositionals: true,
  });
  const { work, certs, classes } = prepareWork('sw-instr-');
  const bodies = requestMix();
  for (const arg of positionals) {
    const { name, ...spec } = parseServerSpec(arg);
    const perRequest = await instructionsPerRequest({
      ...spec,
      nodeArgs: (values['node-flags'] ?? '').split(' ').filter(Boolean),
      work,
      certs,
      classes,
      bodies,
      warm: Number(values.warm ?? 12_000),
      requests: Number(values.requests ?? 2000),
    });
    console.log(`${name.padEnd(12)} ${Math.round(perRequest)} instructions per request`);
  }
  if (values.keep) console.log(`callgrind files kept in ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
