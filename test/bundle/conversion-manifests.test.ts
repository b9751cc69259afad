import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { runCerts } from '../../src/certs/certs-command.js';
import { findControllerCrds, findUpstreamCrds } from '../helpers/tools.mjs';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- rendered YAML is read freely here

const GROUP_CRDS = ['volumegroupsnapshots', 'volumegroupsnapshotcontents', 'volumegroupsnapshotclasses'].map(
  (plural) => `groupsnapshot.storage.k8s.io_${plural}.yaml`,
);

/** An operator's kustomization: an overlay, upstream's group CRDs, the conversion component and a CA component. */
function render(work: string, overlay: string, caComponent: string): Doc[] {
  const use = join(work, `use-${overlay}`);
  mkdirSync(use);
  const crds = findUpstreamCrds().dir as string;
  for (const file of GROUP_CRDS) cpSync(join(crds, file), join(use, file));
  writeFileSync(
    join(use, 'kustomization.yaml'),
    [
      'resources:',
      `  - ../manifests/overlays/${overlay}`,
      ...GROUP_CRDS.map((f) => `  - ${f}`),
      'components:',
      '  - ../manifests/components/conversion',
      `  - ../manifests/components/${caComponent}`,
      '',
    ].join('\n'),
  );
  const text = execFileSync('kubectl', ['kustomize', use], { encoding: 'utf8' });
  return parseAllDocuments(text).map((d) => d.toJS() as Doc);
}

t.test('the conversion components point the three group CRDs at the webhook, with each overlay’s CA', async (t) => {
  const crds = findUpstreamCrds();
  if (crds.dir === undefined) {
    t.fail(`cannot render with upstream's CRDs: ${crds.missing}`);
    return;
  }
  const work = mkdtempSync(join(tmpdir(), 'sw-conversion-manifests-'));
  t.teardown(() => rmSync(work, { recursive: true, force: true }));
  cpSync('manifests', join(work, 'manifests'), { recursive: true, filter: (src) => !src.includes('/generated') });
  const quiet = (): void => undefined;
  await runCerts(
    [
      '--service',
      'snapshot-webhook',
      '--namespace',
      'snapshot-webhook',
      '--out',
      join(work, 'manifests/overlays/self-signed/generated'),
    ],
    quiet,
  );
  for (const [overlay, component] of [
    ['self-signed', 'conversion-ca-self-signed'],
    ['cert-manager', 'conversion-ca-cert-manager'],
    ['openshift', 'conversion-ca-openshift'],
  ] as const) {
    const docs = render(work, overlay, component);
    const service = docs.find((d) => d.kind === 'Service') as Doc;
    const hooks = docs.find((d) => d.kind === 'ValidatingWebhookConfiguration') as Doc;
    const converted = docs.filter((d) => d.kind === 'CustomResourceDefinition');
    t.equal(converted.length, 3, `${overlay}: three CRDs`);
    for (const crd of converted) {
      const { strategy, webhook } = crd.spec.conversion;
      t.same(
        [strategy, webhook.conversionReviewVersions, webhook.clientConfig.service],
        [
          'Webhook',
          ['v1'],
          {
            namespace: service.metadata.namespace,
            name: service.metadata.name,
            path: '/convert',
            port: service.spec.ports[0].port,
          },
        ],
        `${overlay}: ${crd.metadata.name} calls the webhook's Service at /convert`,
      );
      const ca = {
        'self-signed': () =>
          t.equal(webhook.clientConfig.caBundle, hooks.webhooks[0].clientConfig.caBundle, 'the certs tool’s CA bundle'),
        'cert-manager': () =>
          t.equal(
            crd.metadata.annotations['cert-manager.io/inject-ca-from'],
            hooks.metadata.annotations['cert-manager.io/inject-ca-from'],
            'cert-manager injects the CA',
          ),
        openshift: () =>
          t.equal(
            crd.metadata.annotations['service.beta.openshift.io/inject-cabundle'],
            'true',
            'the service CA operator injects it',
          ),
      };
      ca[overlay]();
    }
  }
});

t.test('conversion-store-v1 stores v1 with upstream v8.6 CRDs, and refuses CRDs that serve no v1', async (t) => {
  const work = mkdtempSync(join(tmpdir(), 'sw-store-v1-'));
  t.teardown(() => rmSync(work, { recursive: true, force: true }));
  cpSync('manifests', join(work, 'manifests'), { recursive: true, filter: (src) => !src.includes('/generated') });
  const renderWith = (crds: string) => {
    const use = join(work, `use-${crds.replace(/\W/g, '-')}`);
    mkdirSync(use);
    for (const file of GROUP_CRDS) cpSync(join(crds, file), join(use, file));
    const components = ['conversion', 'conversion-store-v1'].map((c) => `../manifests/components/${c}`);
    writeFileSync(join(use, 'kustomization.yaml'), JSON.stringify({ resources: GROUP_CRDS, components }));
    return execFileSync('kubectl', ['kustomize', use], { encoding: 'utf8', stdio: 'pipe' });
  };
  const current = findUpstreamCrds().dir as string;
  const crds = parseAllDocuments(renderWith(current)).map((d) => d.toJS() as Doc);
  t.same(
    crds.map((c) => c.spec.versions.filter((v: Doc) => v.storage).map((v: Doc) => v.name)),
    [['v1'], ['v1'], ['v1']],
    'each of the three stores v1 only',
  );
  const older = findControllerCrds().dir as string;
  t.throws(() => renderWith(older), /test failed/, "v8.4's CRDs serve no v1: the render stops");
});
