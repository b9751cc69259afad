// What the upstream Go webhook needs of a cluster to start: a loopback HTTP server that lists the bench's
// VolumeSnapshotClasses and holds the watch open (the webhook opens its port only after its informer synced).
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

const LIST_PATH = '/apis/snapshot.storage.k8s.io/v1/volumesnapshotclasses';

/** Starts the server on 127.0.0.1 and writes a kubeconfig for it into `dir`; resolves with { kubeconfig, close }. */
export async function startFakeApiserver(classText, dir) {
  const items = parseAllDocuments(classText)
    .map((doc) => doc.toJS())
    .filter((o) => o?.kind === 'VolumeSnapshotClass')
    .map((o) => ({ ...o, metadata: { ...o.metadata, resourceVersion: '1' } }));
  const list = JSON.stringify({
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshotClassList',
    metadata: { resourceVersion: '1' },
    items,
  });
  const watches = new Set();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== LIST_PATH) {
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
