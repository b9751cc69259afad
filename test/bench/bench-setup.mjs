// What every bench run against upstream starts with: a time limit, a work folder (certificates, the bench's
// classes, the two request mixes), a log file, the upstream webhook unpacked, and the loopback stand-in for the
// apiserver its informer reads the classes from. A missing upstream is a failed check (`NAME: 0 passed, 1 failed`).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { check, summary } from '../helpers/checks.mjs';
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
  const tool = findTool('upstream-webhook');
  if (tool.missing) {
    check(false, `the upstream webhook, the peer of every ratio: ${tool.missing}`);
    process.exit(summary(name));
  }
  const upstream = unpackTool('upstream-webhook', join(work, 'upstream-webhook'));
  const fake = await startFakeApiserver(classText, work);
  return { work, certs, classes, classText, bodies, matchedBodies, logFile: join(work, 'server.log'), upstream, fake };
}
