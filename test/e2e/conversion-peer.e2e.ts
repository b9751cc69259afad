// Our POST /convert next to upstream's snapshot-conversion-webhook v8.6.0 (unmodified), on the same
// ConversionReviews: every object form of test/fixtures/conversion to every version, the edge cases of the
// annotation, and the two kinds whose schema does not change. Where the answers differ, the case must be one that
// docs/conversion.md lists (its table of differences), and every case listed there must still differ.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { devCertPaths, ensureDevCerts } from '../../src/certs/dev-certs.js';
import { INFO_LIST_ANNOTATION } from '../../src/conversion/convert-object.js';
import { parseLossless } from '../../src/conversion/lossless-json.js';
import { startBuiltServer } from '../helpers/built-server.js';
import { httpsRequest } from '../helpers/https.js';
import { missingTool, unpackTool } from '../helpers/tools.mjs';
import { freePort, startProcess, stopAll, waitFor } from './processes.js';
import { httpsGet } from './webhook.js';

type Json = Record<string, unknown>;
const GROUP = 'groupsnapshot.storage.k8s.io';
const VERSIONS = ['v1beta1', 'v1beta2', 'v1'] as const;
const FORMS = fileURLToPath(new URL('../fixtures/conversion/content-forms.json', import.meta.url));
const DOC = fileURLToPath(new URL('../../docs/conversion.md', import.meta.url));

const dir = mkdtempSync(join(tmpdir(), 'sw-conversion-peer-'));
t.teardown(() => {
  stopAll();
  rmSync(dir, { recursive: true, force: true });
});

/** The cases: a name and one object to convert to one version. */
function cases(): { name: string; object: Json; to: string }[] {
  const forms = (parseLossless(readFileSync(FORMS, 'utf8')) as { forms: Record<string, Json> }).forms;
  const v1beta2 = forms.v1beta2 as Json;
  const all: Record<string, Json> = { ...forms, v1: { ...v1beta2, apiVersion: `${GROUP}/v1` } };
  const out: { name: string; object: Json; to: string }[] = [];
  for (const [from, object] of Object.entries(all))
    for (const to of VERSIONS) out.push({ name: `content ${from} -> ${to}`, object, to });
  const beta1 = forms.v1beta1 as Json & { metadata: Json & { annotations: Json }; status: Json };
  const withStatus = (status: Json | undefined): Json => {
    const { status: unused, ...rest } = beta1;
    return status === undefined ? rest : { ...rest, status };
  };
  out.push({ name: 'content v1beta1 annotation without status -> v1beta2', object: withStatus(undefined), to: 'v1beta2' });
  out.push({
    name: 'content v1beta1 annotation, status without pairs -> v1beta2',
    object: withStatus({ readyToUse: true }),
    to: 'v1beta2',
  });
  out.push({
    name: 'content v1beta1 annotation, pairs changed -> v1beta2',
    object: withStatus({ ...beta1.status, volumeSnapshotHandlePairList: [{ volumeHandle: 'vol-9', snapshotHandle: 'snap-9' }] }),
    to: 'v1beta2',
  });
  const { [INFO_LIST_ANNOTATION]: unused, ...others } = beta1.metadata.annotations;
  out.push({
    name: 'content v1beta1 pairs without annotation -> v1beta2',
    object: { ...beta1, metadata: { ...beta1.metadata, annotations: others } },
    to: 'v1beta2',
  });
  const group = {
    kind: 'VolumeGroupSnapshot',
    metadata: { name: 'g', namespace: 'team-a' },
    spec: { source: { selector: { matchLabels: { app: 'db' } } } },
  };
  const klass = {
    kind: 'VolumeGroupSnapshotClass',
    metadata: { name: 'c' },
    driver: 'd',
    deletionPolicy: 'Delete',
    parameters: { a: 'b' },
  };
  for (const [what, object] of [
    ['group snapshot', group],
    ['group class', klass],
  ] as const) {
    out.push({ name: `${what} v1beta1 -> v1beta2`, object: { apiVersion: `${GROUP}/v1beta1`, ...object }, to: 'v1beta2' });
    out.push({ name: `${what} v1beta2 -> v1`, object: { apiVersion: `${GROUP}/v1beta2`, ...object }, to: 'v1' });
  }
  return out;
}

const isRaw = (value: unknown): boolean => (JSON as unknown as { isRawJSON(v: unknown): boolean }).isRawJSON(value);
/** JSON with sorted keys and exact integers, so that two answers compare as text. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value !== 'object' || value === null || isRaw(value)) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, canonical((value as Json)[k])]),
  );
}

/** The annotation's list as canonical JSON: the two write its keys in different orders, with the same meaning. */
function canonicalAnnotation(object: unknown): unknown {
  const metadata = ((object as Json).metadata ?? {}) as Json;
  const annotations = (metadata.annotations ?? {}) as Json;
  const list = annotations[INFO_LIST_ANNOTATION];
  if (typeof list !== 'string') return object;
  const sorted = JSON.stringify(canonical(parseLossless(list)));
  return { ...(object as Json), metadata: { ...metadata, annotations: { ...annotations, [INFO_LIST_ANNOTATION]: sorted } } };
}

/** What an answer says: Success and the objects, or Failure and its message. */
function outcome(body: string): string {
  const response = ((parseLossless(body) as Json).response ?? {}) as Json;
  const result = (response.result ?? {}) as Json;
  if (result.status !== 'Success') return `Failure: ${String(result.message)}`;
  return JSON.stringify(canonical((response.convertedObjects as unknown[]).map(canonicalAnnotation)));
}

/** The case names docs/conversion.md lists as differing from upstream (first column of its table). */
function documentedDifferences(): Set<string> {
  const text = readFileSync(DOC, 'utf8');
  const section = text.slice(text.indexOf('## Compared with upstream'));
  return new Set([...section.matchAll(/^\| `([^`]+)` +\|/gm)].map((m) => m[1] as string));
}

// Upstream's conversion webhook is built by the user (README "Optional programs"); without it this test skips.
const peerMissing = missingTool('upstream-conversion-webhook');
t.test("upstream's conversion webhook and ours on the same reviews", { skip: peerMissing ?? false }, async (t) => {
  const ours = await startBuiltServer(t);
  await ensureDevCerts(join(dir, 'certs'));
  const paths = devCertPaths(join(dir, 'certs'));
  const ca = readFileSync(paths.caFile);
  const port = await freePort();
  const binary = unpackTool('upstream-conversion-webhook', join(dir, 'snapshot-conversion-webhook'));
  const upstream = startProcess(binary, [
    `--tls-cert-file=${paths.certFile}`,
    `--tls-private-key-file=${paths.keyFile}`,
    `--port=${port}`,
  ]);
  t.teardown(() => upstream.stop());
  await waitFor('upstream /readyz', async () => (await httpsGet(port, '/readyz', ca)).status === 200, 10_000);

  const differing = new Set<string>();
  for (const [i, { name, object, to }] of cases().entries()) {
    const review = JSON.stringify({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: { uid: `u-${i}`, desiredAPIVersion: `${GROUP}/${to}`, objects: [object] },
    });
    const headers = { 'content-type': 'application/json', accept: 'application/json' };
    const [a, b] = await Promise.all([
      httpsRequest(ours.port, { path: '/convert', body: review, ca: ours.ca, headers }),
      httpsRequest(port, { path: '/convert', body: review, ca, headers }),
    ]);
    t.equal(a.status, 200, `${name}: ours answers 200`);
    const [mine, theirs] = [outcome(a.body), outcome(b.body)];
    t.notMatch(mine, /^Failure/, `${name}: ours converts`);
    if (mine !== theirs) {
      differing.add(name);
      let at = 0;
      while (at < mine.length && mine[at] === theirs[at]) at += 1;
      const from = Math.max(0, at - 120);
      t.comment(
        `${name}, from character ${at}:\n  ours:     ${mine.slice(from, at + 200)}\n  upstream: ${theirs.slice(from, at + 200)}`,
      );
    }
  }
  t.same(
    [...differing].sort(),
    [...documentedDifferences()].sort(),
    'the differences are exactly those docs/conversion.md lists',
  );
});
