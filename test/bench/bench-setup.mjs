// What every bench run against upstream starts with: a time limit, a work folder (certificates, the bench's
// classes, the two request mixes), a log file, the upstream webhook unpacked, and the loopback stand-in for the
// apiserver its informer reads the classes from. The upstream webhook is built by the user (README "Optional
// programs"): when it is missing, `upstream` is undefined and `peerMissing` says why; the bench then measures ours
// against the bare Node server only.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeApiserver } from '../helpers/fake-apiserver.mjs';
import { findTool, unpackTool } from '../helpers/tools.mjs';
import { prepareWork, requestMix } from './mix.mjs';

const TIME_LIMIT_MS = 30 * 60_000;

export async function startBench(name, prefix) {
  setTimeout(() => {
    console.error(`${name}: over its time limit`);
    process.exit(1);
  }, TIME_LIMIT_MS).unref();
  const { work, certs, classes, classText } = prepareWork(prefix);
  const bodies = join(work, 'bodies.json');
  writeFileSync(bodies, JSON.stringify(requestMix('every-write')));
  const matchedBodies = join(work, 'matched-bodies.json');
  writeFileSync(matchedBodies, JSON.stringify(requestMix('matched')));
  const peerMissing = findTool('upstream-webhook').missing;
  if (peerMissing) console.error(`${name}: the peer is missing, ours is measured against the bare server: ${peerMissing}`);
  const upstream = peerMissing ? undefined : unpackTool('upstream-webhook', join(work, 'upstream-webhook'));
  const fake = await startFakeApiserver(classText, work);
  const logFile = join(work, 'server.log');
  return { work, certs, classes, classText, bodies, matchedBodies, logFile, upstream, peerMissing, fake };
}
