// docs/microshift.md's device image layout, pasted into an empty folder as an image build runs it (with the checkout's
// manifests beside it and `snapshot-webhook` on the PATH as `npm install -g` puts it), then checked: the manifests in
// /usr/lib/microshift/manifests.d with the image pinned by digest and one replica, the greenboot check as shipped
// and executable, its settings naming the same image, and the offline check of what the image ships passing.
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { docBlocks } from '../helpers/doc-blocks.js';

const ROOT = resolve('.');
const [layout = '', offline = ''] = docBlocks('microshift', 'The webhook on MicroShift');
const work = mkdtempSync(join(tmpdir(), 'sw-device-layout-'));
t.teardown(() => rmSync(work, { recursive: true, force: true }));
cpSync(join(ROOT, 'manifests'), join(work, 'manifests'), { recursive: true, filter: (src) => !src.includes('/generated') });
const bin = join(work, 'bin');
mkdirSync(bin);
writeFileSync(join(bin, 'snapshot-webhook'), `#!/bin/sh\nexec "${process.execPath}" "${ROOT}/dist/bundle/main.js" "$@"\n`);
chmodSync(join(bin, 'snapshot-webhook'), 0o755);
const env = { ...process.env, KUBECONFIG: '', PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` };
const paste = (block: string) => spawnSync('bash', ['-euo', 'pipefail', '-c', block], { cwd: work, env, encoding: 'utf8' });

const image = /^IMAGE=(\S+)$/m.exec(layout)?.[1] ?? '';
const rootfs = join(work, 'rootfs');

t.test('the layout block, pasted: each file where MicroShift and greenboot read it', async (t) => {
  t.match(image, /^[^@]+@sha256:[0-9a-f]{64}$/, 'the block pins the image by digest');
  const r = paste(layout);
  t.equal(r.status, 0, r.stderr);
  const folder = join(rootfs, 'usr/lib/microshift/manifests.d/050-snapshot-webhook');
  t.same(readFileSync(join(folder, 'kustomization.yaml'), 'utf8'), 'resources:\n  - all.yaml\n');
  const docs = parseAllDocuments(readFileSync(join(folder, 'all.yaml'), 'utf8')).map(
    (d) =>
      d.toJS() as { kind: string; spec?: { replicas?: number; template?: { spec?: { containers?: { image?: string }[] } } } },
  );
  const deployment = docs.find((d) => d.kind === 'Deployment');
  t.same(
    deployment?.spec?.template?.spec?.containers?.map((c) => c.image),
    [image],
    'the image, by digest',
  );
  t.equal(deployment?.spec?.replicas, 1, 'one replica: the single-node component');
  t.ok(
    docs.some((d) => d.kind === 'ValidatingWebhookConfiguration'),
    'the webhook configurations',
  );
  const check = join(rootfs, 'etc/greenboot/check/required.d/50_snapshot_webhook_check.sh');
  t.equal(
    readFileSync(check, 'utf8'),
    readFileSync('manifests/greenboot/50_snapshot_webhook_check.sh', 'utf8'),
    'the shipped script',
  );
  t.equal(statSync(check).mode & 0o777, 0o755, 'executable');
  t.equal(readFileSync(join(rootfs, 'etc/snapshot-webhook/greenboot.env'), 'utf8'), `SNAPSHOT_WEBHOOK_IMAGE=${image}\n`);
});

/** A folder of classes the image ships beside the webhook, as a kustomization MicroShift applies. */
function shipClasses(defaults: readonly string[]): void {
  const folder = join(rootfs, 'usr/lib/microshift/manifests.d/060-classes');
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'kustomization.yaml'), 'resources:\n  - classes.yaml\n');
  const klass = (name: string): string =>
    `apiVersion: snapshot.storage.k8s.io/v1\nkind: VolumeSnapshotClass\nmetadata:\n  name: ${name}\n  annotations:\n` +
    `    snapshot.storage.kubernetes.io/is-default-class: "true"\ndriver: topolvm.io\ndeletionPolicy: Delete\n`;
  writeFileSync(join(folder, 'classes.yaml'), defaults.map(klass).join('---\n'));
}

t.test('the offline check of what the image ships: one default passes, a second for the driver is denied', async (t) => {
  shipClasses(['topolvm-snapclass']);
  const one = paste(offline);
  t.equal(one.status, 0, `${one.stdout}${one.stderr}`);
  t.match(one.stdout, /^1 checked, 0 denied, 0 warnings, \d+ skipped \(not snapshot kinds\), 0 unreadable$/m);
  shipClasses(['topolvm-snapclass', 'fast']);
  const two = paste(offline);
  t.equal(two.status, 1, 'exit 1: the image would ship two defaults');
  t.match(two.stdout, 'default snapshot class: topolvm-snapclass already exists for driver: topolvm.io');
});
