// The manifests against each release's real apiserver (server-side dry run: every object validated by the
// apiserver, none kept). On 1.20 (the oldest docs/install.md supports) the base with the kubernetes-1.20 component
// applies, and the base alone fails only on the policy/v1 PodDisruptionBudget and the matchConditions, as documented; on 1.36 the base
// applies as it is, matchConditions included, and so does the policy-only overlay.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startCluster, type TestCluster } from './cluster.js';
import { kube } from './kube.js';
import { stopAll } from './processes.js';

const dir = mkdtempSync(join(tmpdir(), 'sw-e2e-manifests-'));
const manifests = join(dir, 'manifests');
let cluster: TestCluster | undefined;
t.teardown(async () => {
  await cluster?.stop();
  stopAll();
  rmSync(dir, { recursive: true, force: true });
});

function kubectl(args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('kubectl', [`--kubeconfig=${(cluster as TestCluster).kubeconfig}`, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A kustomization of the base with these components, next to the copied manifests. */
function withComponents(name: string, components: readonly string[]): string {
  const at = join(manifests, name);
  mkdirSync(at, { recursive: true });
  const list = components.map((c) => `../components/${c}`).join(', ');
  writeFileSync(join(at, 'kustomization.yaml'), `resources: [../base]\ncomponents: [${list}]\n`);
  return at;
}

t.before(async () => {
  cpSync('manifests', manifests, { recursive: true, filter: (src) => !src.includes('/generated') });
  cluster = await startCluster(join(dir, 'cluster'));
  // Namespaced objects are dry-run into the webhook's namespace, so it must exist.
  const ns = kubectl(['create', 'namespace', 'snapshot-webhook', '--save-config']);
  if (ns.status !== 0) throw new Error(ns.stderr);
});

t.test(`on ${kube.version}, the base with this release's components applies`, async (t) => {
  for (const components of [[...kube.components], [...kube.components, 'first-install']]) {
    const r = kubectl(['apply', '--dry-run=server', '-k', withComponents(`on-release-${components.length}`, components)]);
    t.equal(r.status, 0, `${['base', ...components].join(' + ')}: ${r.stderr}`);
    for (const kind of ['deployment.apps', 'poddisruptionbudget.policy', 'networkpolicy.networking.k8s.io', 'role.rbac'])
      t.match(
        r.stdout,
        new RegExp(`^${kind.replace('.', '\\.')}[^ ]*/snapshot-webhook[^ ]* (created|configured) \\(server dry run\\)`, 'm'),
        kind,
      );
    t.match(
      r.stdout,
      /^validatingwebhookconfiguration\.admissionregistration\.k8s\.io\/validation-webhook\.snapshot\.storage\.k8s\.io created \(server dry run\)/m,
      'the webhook configuration',
    );
  }
});

if (kube.version === '1.20.2') {
  t.test('on 1.20, the base alone fails only on the policy/v1 PodDisruptionBudget and matchConditions', async (t) => {
    const r = kubectl(['apply', '--dry-run=server', '-k', join(manifests, 'base')]);
    t.not(r.status, 0);
    // The two things 1.20 does not know: the budget's policy/v1 and the webhooks' matchConditions (1.30).
    t.match(r.stderr, 'no matches for kind "PodDisruptionBudget" in version "policy/v1"', 'the budget');
    t.match(r.stderr, 'unknown field "matchConditions"', 'matchConditions');
    t.notMatch(r.stderr.replace(/unknown field "matchConditions"/g, ''), /unknown field/, 'nothing else unknown');
    t.match(r.stdout, /deployment\.apps\/snapshot-webhook created \(server dry run\)/, 'the rest applies');
  });
} else {
  t.test(
    `on ${kube.version} without the Prometheus Operator, the openshift overlay (MicroShift's) applies as it is`,
    async (t) => {
      const r = kubectl(['apply', '--dry-run=server', '-k', join(manifests, 'overlays', 'openshift')]);
      t.equal(r.status, 0, r.stderr);
      t.match(r.stdout, /^deployment\.apps\/snapshot-webhook created \(server dry run\)$/m, 'the Deployment');
      t.notMatch(r.stdout, /monitoring\.coreos\.com/, 'no monitoring object');
      const monitored = kubectl(['apply', '--dry-run=server', '-k', join(manifests, 'overlays', 'openshift-monitoring')]);
      t.not(monitored.status, 0, 'the monitoring overlay needs the CRDs, and says so');
      t.match(monitored.stderr, /no matches for kind "(ServiceMonitor|PrometheusRule)" in version "monitoring\.coreos\.com\/v1"/);
    },
  );

  t.test(`on ${kube.version}, the policy-only overlay applies as it is`, async (t) => {
    const r = kubectl(['apply', '--dry-run=server', '-k', join(manifests, 'overlays', 'policy-only')]);
    t.equal(r.status, 0, r.stderr);
    t.equal(
      (
        r.stdout.match(
          /^validatingadmissionpolicy(binding)?\.admissionregistration\.k8s\.io\/\S+ created \(server dry run\)$/gm,
        ) ?? []
      ).length,
      4,
      'a policy and a binding per class kind',
    );
  });
}
