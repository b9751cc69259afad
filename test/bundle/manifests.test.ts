import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { parseAllDocuments } from 'yaml';
import { runCerts } from '../../src/certs/certs-command.js';
import { CLASS_KIND_FACTS, CLASS_KINDS } from '../../src/classes/class-kinds.js';
import { allRoutes } from '../../src/rules/table.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- rendered YAML is read freely here

const quiet = (): void => undefined;
const tmp = mkdtempSync(join(tmpdir(), 'sw-manifests-'));
t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
cpSync('manifests', join(tmp, 'manifests'), { recursive: true, filter: (src) => !src.includes('/generated') });
const generated = join(tmp, 'manifests/overlays/self-signed/generated');

function render(dir: string): Doc[] {
  const text = execFileSync('kubectl', ['kustomize', join(tmp, 'manifests', dir)], { encoding: 'utf8' });
  return parseAllDocuments(text).map((d) => d.toJS() as Doc);
}
const one = (docs: Doc[], kind: string): Doc => {
  const found = docs.filter((d) => d.kind === kind);
  if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}`);
  return found[0] as Doc;
};

t.before(async () => {
  await runCerts(['--service', 'snapshot-webhook', '--namespace', 'snapshot-webhook', '--out', generated], quiet);
});

const served = [...allRoutes().values()].map((r) => `${r.group}/${r.version}/${r.resource}`).sort();

/** Each webhook configuration carries the annotation that has its caBundle injected. */
function annotatedAll(t: Test, configs: Doc[], annotation: string, value: string): void {
  for (const config of configs) t.equal(config.metadata.annotations[annotation], value, `${config.metadata.name}: ${annotation}`);
}

/** Only the default-class rule fails closed; the object checks are ignored when the webhook is down (docs/install.md). */
function registeredByConsequence(t: Test, webhooks: Doc[]): void {
  t.same(
    webhooks.map((w: Doc) => `${w.name} ${w.failurePolicy} ${w.timeoutSeconds}`).sort(),
    [
      'object-checks.groupsnapshot.storage.k8s.io Ignore 2',
      'object-checks.snapshot.storage.k8s.io Ignore 2',
      'validation-webhook.groupsnapshot.storage.k8s.io Fail 5',
      'validation-webhook.snapshot.storage.k8s.io Fail 5',
    ],
    'only the default-class rule fails closed; the object checks are ignored when the webhook is down, within 2 s',
  );
  for (const w of webhooks) t.equal(w.matchConditions?.length, 1, `${w.name} has its matchConditions`);
}

for (const overlay of [
  '',
  'overlays/cert-manager',
  'overlays/openshift',
  'overlays/openshift-monitoring',
  'overlays/self-signed',
]) {
  t.test(`${overlay || 'base'} renders and is consistent`, async (t) => {
    const docs = render(overlay);
    const configs = docs.filter((d) => d.kind === 'ValidatingWebhookConfiguration');
    t.same(
      configs.map((c) => c.metadata.name),
      ['object-checks.snapshot.storage.k8s.io', 'validation-webhook.snapshot.storage.k8s.io'],
      "two configurations: upstream's name for the default-class rule, and the object checks",
    );
    const hooks = { webhooks: configs.flatMap((c) => c.webhooks as Doc[]) as Doc[] };
    const service = one(docs, 'Service');
    const deployment = one(docs, 'Deployment');
    const pod = deployment.spec.template.spec;
    const container = pod.containers[0];

    const ruled = hooks.webhooks
      .flatMap((w: Doc) =>
        w.rules.flatMap((r: Doc) =>
          r.apiGroups.flatMap((g: string) =>
            r.apiVersions.flatMap((v: string) => r.resources.map((res: string) => `${g}/${v}/${res}`)),
          ),
        ),
      )
      .sort();
    t.same([...new Set(ruled)], served, 'the rules name exactly the resources the server handles');
    registeredByConsequence(t, hooks.webhooks);
    t.notOk(
      ruled.some((r: string) => r.split('/').length > 3),
      'no subresource is routed to the webhook: status writes of the controller and the sidecars never reach it',
    );
    for (const w of hooks.webhooks) {
      t.same(
        w.rules.flatMap((r: Doc) => r.operations).sort(),
        ['CREATE', 'UPDATE'].flatMap((o) => Array(w.rules.length).fill(o)).sort(),
      );
      t.equal(w.matchPolicy, 'Equivalent');
      t.equal(w.sideEffects, 'NoneOnDryRun', 'events are recorded, never on dry runs');
      t.same(w.admissionReviewVersions, ['v1', 'v1beta1']);
      t.ok(w.timeoutSeconds >= 1 && w.timeoutSeconds <= 10, 'timeoutSeconds set');
      const ref = w.clientConfig.service;
      t.same([ref.name, ref.namespace], [service.metadata.name, service.metadata.namespace], 'clientConfig names the Service');
      t.equal(ref.port, service.spec.ports[0].port, 'and its port');
      t.equal(ref.path, '/validate');
    }
    t.equal(service.spec.ports[0].targetPort, container.ports[0].name, 'the Service targets the container port');
    t.ok(container.args.includes(`--port=${container.ports[0].containerPort}`), 'the server listens on the container port');
    t.same(service.spec.selector, deployment.spec.template.metadata.labels, 'the Service selects the pods');

    // The restricted Pod Security profile.
    const sc = container.securityContext;
    t.equal(pod.securityContext.runAsNonRoot, true);
    t.equal(pod.securityContext.seccompProfile.type, 'RuntimeDefault');
    t.equal(sc.allowPrivilegeEscalation, false);
    t.equal(sc.readOnlyRootFilesystem, true);
    t.same(sc.capabilities.drop, ['ALL']);
    t.notOk(pod.hostNetwork || pod.hostPID || pod.hostIPC, 'no host namespaces');
    t.ok(container.readinessProbe.httpGet.path === '/readyz' && container.livenessProbe.httpGet.path === '/healthz');
    t.ok(container.resources.requests.memory && container.resources.limits.memory, 'memory sized');
    t.equal(deployment.spec.replicas, 2);
    t.equal(one(docs, 'PodDisruptionBudget').spec.maxUnavailable, 1, 'never blocks a drain');
    const delay = Number(container.args.find((a: string) => a.startsWith('--shutdown-delay='))?.split('=')[1]);
    t.ok(
      pod.terminationGracePeriodSeconds > delay + Math.max(...hooks.webhooks.map((w: Doc) => w.timeoutSeconds)),
      'the grace period fits the shutdown',
    );
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    t.equal(container.image, `snapshot-webhook:${version}`, 'the image is the package version, set by kustomize images:');
    t.equal(pod.priorityClassName, 'system-cluster-critical');
    const policy = one(docs, 'NetworkPolicy');
    t.same(policy.spec.podSelector.matchLabels, deployment.spec.template.metadata.labels, 'the policy selects the pods');
    t.same(policy.spec.policyTypes, ['Ingress']);
    t.same(
      policy.spec.ingress,
      [{ ports: [{ port: container.ports[0].containerPort, protocol: 'TCP' }] }],
      'only the webhook port',
    );
    const secret = pod.volumes.find((v: Doc) => v.name === 'certs').secret.secretName;
    t.equal(secret, 'snapshot-webhook-tls');

    const role = docs.find((d) => d.kind === 'ClusterRole') as Doc;
    t.same(
      role.rules.filter((r: Doc) => r.resources).map((r: Doc) => [r.resources, r.verbs]),
      [
        [['volumesnapshotclasses'], ['get', 'list', 'watch']],
        [['volumegroupsnapshotclasses'], ['get', 'list', 'watch']],
        [['events'], ['create', 'patch']],
      ],
      'least privilege: read the class kinds, write events',
    );

    // The default-class claims: the Leases the server names, in the pod's own namespace, and nothing more.
    const claims = docs.find((d) => d.kind === 'Role' && d.metadata.name === 'snapshot-webhook-default-claims') as Doc;
    t.equal(claims.metadata.namespace, deployment.metadata.namespace, 'the Role is in the webhook namespace');
    t.same(
      claims.rules.map((r: Doc) => [r.apiGroups, r.resources, r.resourceNames ?? [], r.verbs]),
      [
        [['coordination.k8s.io'], ['leases'], [], ['create']],
        [['coordination.k8s.io'], ['leases'], CLASS_KINDS.map((k) => CLASS_KIND_FACTS[k].claimLease), ['get', 'update']],
      ],
      'leases only: create, and get/update of the two claim Leases',
    );
    const binding = docs.find((d) => d.kind === 'RoleBinding' && d.roleRef.name === claims.metadata.name) as Doc;
    t.same(binding.subjects, [
      { kind: 'ServiceAccount', name: pod.serviceAccountName, namespace: deployment.metadata.namespace },
    ]);
    const env = Object.fromEntries(container.env.map((e: Doc) => [e.name, e.valueFrom?.fieldRef?.fieldPath ?? e.value]));
    t.equal(env.POD_NAMESPACE, 'metadata.namespace', 'serve --namespace comes from the downward API');
    t.equal(env.POD_NAME, 'metadata.name', 'the Lease holder is the pod');

    const dnsName = `${service.metadata.name}.${service.metadata.namespace}.svc`;
    if (overlay === 'overlays/cert-manager') {
      const serving = docs.find((d) => d.kind === 'Certificate' && d.metadata.name === 'snapshot-webhook-serving') as Doc;
      t.ok(serving.spec.dnsNames.includes(dnsName), 'the certificate names the Service');
      t.equal(serving.spec.secretName, secret);
      annotatedAll(t, configs, 'cert-manager.io/inject-ca-from', `${serving.metadata.namespace}/${serving.metadata.name}`);
    }
    if (overlay === 'overlays/openshift') {
      t.same(
        docs.filter((d) => String(d.apiVersion).startsWith('monitoring.coreos.com/')).map((d) => d.kind),
        [],
        'no monitoring objects unless chosen (MicroShift has no Prometheus Operator)',
      );
    }
    if (overlay === 'overlays/openshift-monitoring') {
      t.equal(one(docs, 'Namespace').metadata.labels['openshift.io/cluster-monitoring'], 'true');
      t.ok(
        docs.some((d) => d.kind === 'Role' && d.metadata.name === 'snapshot-webhook-prometheus'),
        'cluster monitoring may read',
      );
    }
    if (overlay.startsWith('overlays/openshift')) {
      const monitor = overlay.endsWith('-monitoring') ? one(docs, 'ServiceMonitor') : undefined;
      if (monitor !== undefined) {
        t.same(monitor.spec.selector.matchLabels, {
          'app.kubernetes.io/name': service.metadata.labels['app.kubernetes.io/name'],
        });
        t.equal(monitor.spec.endpoints[0].port, service.spec.ports[0].name, 'the monitor scrapes the Service port');
        t.equal(monitor.spec.endpoints[0].tlsConfig.serverName, dnsName);
        t.equal(one(docs, 'PrometheusRule').metadata.namespace, service.metadata.namespace);
      }
      t.equal(service.metadata.annotations['service.beta.openshift.io/serving-cert-secret-name'], secret);
      annotatedAll(t, configs, 'service.beta.openshift.io/inject-cabundle', 'true');
      t.equal(pod.securityContext.runAsUser, undefined, 'the SCC assigns the user');
    }
    if (overlay === 'overlays/self-signed') {
      const tlsSecret = one(docs, 'Secret');
      t.equal(tlsSecret.metadata.name, secret);
      const cert = new X509Certificate(Buffer.from(tlsSecret.data['tls.crt'], 'base64'));
      t.match(cert.subjectAltName, `DNS:${dnsName}`, 'the certificate names the Service');
      const firstBundle = (hooks.webhooks[0] as Doc).clientConfig.caBundle as string;
      const bundle = Buffer.from(firstBundle, 'base64').toString();
      t.ok(cert.verify(new X509Certificate(bundle).publicKey), 'the caBundle verifies the served certificate');
      t.same(
        hooks.webhooks.map((w: Doc) => w.clientConfig.caBundle),
        hooks.webhooks.map(() => firstBundle),
        'every webhook of both configurations has the caBundle',
      );
    }
  });
}

/** The base with components, rendered from a kustomization written next to the copied manifests. */
function renderWith(name: string, components: readonly string[]): Doc[] {
  const dir = join(tmp, 'manifests', name);
  mkdirSync(dir, { recursive: true });
  const list = components.map((c) => `../components/${c}`).join(', ');
  writeFileSync(join(dir, 'kustomization.yaml'), `resources: [../base]\ncomponents: [${list}]\n`);
  return render(name);
}

t.test('components: the first install (failurePolicy Ignore) and Kubernetes 1.20 (policy/v1beta1 budget)', async (t) => {
  const first = renderWith('check-first-install', ['first-install']).filter((d) => d.kind === 'ValidatingWebhookConfiguration');
  t.same(
    first.flatMap((c) => c.webhooks.map((w: Doc) => w.failurePolicy)),
    ['Ignore', 'Ignore', 'Ignore', 'Ignore'],
    'every webhook ignores failures',
  );
  const withoutConditions = renderWith('check-without-match-conditions', ['without-match-conditions']);
  const only = one(withoutConditions, 'ValidatingWebhookConfiguration');
  t.equal(only.metadata.name, 'validation-webhook.snapshot.storage.k8s.io', 'without CEL rules: the object checks go');
  t.same(
    only.webhooks.map((w: Doc) => [w.failurePolicy, w.matchConditions]),
    [
      ['Fail', undefined],
      ['Fail', undefined],
    ],
    'and every write goes to the webhooks that fail closed',
  );
  const old = renderWith('check-1.20', ['kubernetes-1.20']);
  t.equal(one(old, 'PodDisruptionBudget').apiVersion, 'policy/v1beta1');
  t.same(one(old, 'PodDisruptionBudget').spec, one(render(''), 'PodDisruptionBudget').spec, 'the same budget');
});

t.test('mutual TLS: the client CA and names, and the probes on the plain probe port', async (t) => {
  const docs = renderWith('check-mutual-tls', ['mutual-tls']);
  const container = one(docs, 'Deployment').spec.template.spec.containers[0];
  const arg = (name: string): string | undefined => container.args.find((a: string) => a.startsWith(`--${name}=`))?.split('=')[1];
  const port = Number(arg('probe-port'));
  t.equal(container.ports.find((p: Doc) => p.name === 'probes').containerPort, port);
  for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe'])
    t.same([container[probe].httpGet.port, container[probe].httpGet.scheme], ['probes', 'HTTP'], probe);
  const mount = container.volumeMounts.find((m: Doc) => m.name === 'client-ca').mountPath;
  t.equal(arg('client-ca-file'), `${mount}/ca.crt`, 'the CA file is the mounted ConfigMap');
  t.equal(arg('allowed-client-names'), 'kube-apiserver-webhook-client');
  t.same(
    one(docs, 'NetworkPolicy').spec.ingress[0].ports.map((p: Doc) => p.port),
    [8443, port],
    'the policy admits the probe port too',
  );
});

t.test('the shipped PrometheusRule is the alert rules of docs/metrics.md', async (t) => {
  const rule = one(render('components/monitoring'), 'PrometheusRule');
  const doc = readFileSync('docs/metrics.md', 'utf8');
  const block = /## Alert rules[\s\S]*?```yaml\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
  t.same(parseAllDocuments(block)[0]?.toJS(), { groups: rule.spec.groups });
  t.ok(
    rule.spec.groups[0].rules.some((r: Doc) => r.expr.includes('snapshot_webhook_default_classes')),
    'an alert for more than one default per driver',
  );
});

t.test('the certs tool keeps its CA, and a rotation keeps the old CA in the bundle', async (t) => {
  const out = join(tmp, 'rotate');
  const read = (f: string): string => readFileSync(join(out, f), 'utf8');
  {
    await runCerts(['--out', out, '--service', 'hook', '--namespace', 'ns'], quiet);
    const firstCa = read('ca.crt');
    await runCerts(['--out', out, '--service', 'hook', '--namespace', 'ns'], quiet);
    t.equal(read('ca.crt'), firstCa, 'a second run keeps the CA');
    t.equal(read('ca-bundle.crt'), firstCa);
    await runCerts(['--out', out, '--service', 'hook', '--namespace', 'ns', '--rotate'], quiet);
    const secondCa = read('ca.crt');
    t.not(secondCa, firstCa, 'rotation makes a new CA');
    t.equal(read('ca-bundle.crt'), secondCa + firstCa, 'both CAs are trusted while the change rolls out');
  }
  const ca = new X509Certificate(read('ca.crt'));
  const leaf = new X509Certificate(read('tls.crt'));
  t.equal(ca.ca, true, 'the CA is marked as a CA');
  t.equal(leaf.ca, false);
  t.same(leaf.keyUsage, ['1.3.6.1.5.5.7.3.1'], 'server auth only');
  t.equal(leaf.subjectAltName, 'DNS:hook.ns.svc, DNS:hook.ns.svc.cluster.local');
  t.ok(leaf.verify(ca.publicKey), 'signed by the current CA');
  t.match(leaf.toLegacyObject().asn1Curve ?? 'prime256v1', 'prime256v1');
  await runCerts(['--out', out, '--service', 'hook', '--namespace', 'ns', '--ip', '192.0.2.10,2001:db8::1'], quiet);
  t.equal(
    new X509Certificate(read('tls.crt')).subjectAltName,
    'DNS:hook.ns.svc, DNS:hook.ns.svc.cluster.local, IP Address:192.0.2.10, IP Address:2001:DB8:0:0:0:0:0:1',
    '--ip adds IP SANs',
  );
  await t.rejects(runCerts(['--out', out, '--ip', 'not-an-ip'], quiet), { message: '--ip "not-an-ip" is not an IP address' });
});
