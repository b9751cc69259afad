// What the upstream Go webhook needs of a cluster to start: a loopback HTTP server that lists the given
// VolumeSnapshotClasses (and, for --enable-volume-group-snapshot-webhook, v1alpha1 VolumeGroupSnapshotClasses)
// and holds each watch open (the webhook opens its port only after its informers synced). Used by the bench and
// by the measured differences from v7.0.2 (test/helpers/upstream-decisions.mjs).
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

/** List path -> [the kind its items have, the list's apiVersion]. */
const LISTS = {
  '/apis/snapshot.storage.k8s.io/v1/volumesnapshotclasses': ['VolumeSnapshotClass', 'snapshot.storage.k8s.io/v1'],
  '/apis/groupsnapshot.storage.k8s.io/v1alpha1/volumegroupsnapshotclasses': [
    'VolumeGroupSnapshotClass',
    'groupsnapshot.storage.k8s.io/v1alpha1',
  ],
};

/** Starts the server on 127.0.0.1 and writes a kubeconfig for it into `dir`; resolves with { kubeconfig, close }. */
export async function startFakeApiserver(classText, dir) {
  const objects = parseAllDocuments(classText).map((doc) => doc.toJS());
  const lists = Object.fromEntries(
    Object.entries(LISTS).map(([path, [kind, apiVersion]]) => [
      path,
      JSON.stringify({
        apiVersion,
        kind: `${kind}List`,
        metadata: { resourceVersion: '1' },
        items: objects
          .filter((o) => o?.kind === kind)
          .map((o) => ({ ...o, apiVersion, metadata: { ...o.metadata, resourceVersion: '1' } })),
      }),
    ]),
  );
  const watches = new Set();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const list = lists[url.pathname];
    if (list === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end('{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}');
    }
    if (url.searchParams.get('watch') === 'true') {
      res.writeHead(200, { 'content-type': 'application/json' });
      watches.add(res);
      res.on('close', () => watches.delete(res));
      return undefined;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(list);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  const kubeconfig = join(dir, 'fake-apiserver.kubeconfig');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{ name: bench, cluster: { server: "http://127.0.0.1:' + port + '" } }]',
      'users: [{ name: bench, user: {} }]',
      'contexts: [{ name: bench, context: { cluster: bench, user: bench } }]',
      'current-context: bench',
      '',
    ].join('\n'),
  );
  return {
    kubeconfig,
    close: () =>
      new Promise((resolve) => {
        for (const res of watches) res.destroy();
        server.close(() => resolve());
      }),
  };
}
