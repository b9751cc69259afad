// manifests/greenboot/50_snapshot_webhook_check.sh, the device's greenboot check (docs/microshift.md), run by bash
// against the real apiserver with the webhook registered. MicroShift's greenboot functions are its own
// (test/fixtures/microshift-greenboot), so the budget is get_wait_timeout's. Stood in for: `grub2-editenv` (the
// boot counter), `microshift healthcheck` (records its arguments and exits as told: the suite has no kubelet), and
// `podman run IMAGE check ...`, which runs the same bundle's `check` with the mounted kubeconfig's host path (the
// image itself is run by `npm run test:image`). What this cannot run: greenboot itself, a reboot and a rollback.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import t from 'tap';
import { KubeConfig } from '@kubernetes/client-node';
import { startCluster, type TestCluster } from './cluster.js';
import { installCrds, untilServedFromCache } from './crds.js';
import { freePort, runToEnd, stopAll, waitFor } from './processes.js';
import { DRIVER, klass, snapshotObjects, VSCLASS } from './snapshot-objects.js';
import { registerWebhook, startWebhook, untilCalled, type TestWebhook } from './webhook.js';

const SCRIPT = resolve('manifests/greenboot/50_snapshot_webhook_check.sh');
const FUNCTIONS = resolve('test/fixtures/microshift-greenboot/functions.sh');
const MAIN = resolve('dist/bundle/main.js');
const IMAGE = 'registry.example.com/snapshot-webhook@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';
const dir = mkdtempSync(join(tmpdir(), 'sw-e2e-greenboot-'));
const shims = join(dir, 'shims');
const logs = { microshift: join(dir, 'microshift.log'), podman: join(dir, 'podman.log') };
let cluster: TestCluster | undefined;
let webhook: TestWebhook | undefined;
t.teardown(async () => {
  await webhook?.process.stop();
  await cluster?.stop();
  stopAll();
  rmSync(dir, { recursive: true, force: true });
});

function writeShims(): void {
  mkdirSync(shims);
  const shim = (name: string, body: string): void => {
    writeFileSync(join(shims, name), `#!/bin/bash\n${body}\n`);
    chmodSync(join(shims, name), 0o755);
  };
  shim('grub2-editenv', 'echo "boot_counter=${TEST_BOOT_COUNTER:-2}"');
  shim('microshift', `echo "$*" >> '${logs.microshift}'\nexit "\${TEST_HEALTHCHECK_STATUS:-0}"`);
  // podman run [options] IMAGE ARGS...: the options this script passes, then the image's entrypoint on ARGS.
  shim(
    'podman',
    [
      `echo "$*" >> '${logs.podman}'`,
      '[ "$1" = run ] || exit 125; shift',
      'volume=""',
      'while [ $# -gt 0 ]; do case "$1" in',
      '  --volume) volume="$2"; shift 2;;',
      '  --network|--user|--cap-drop|--security-opt) shift 2;;',
      '  --rm|--read-only) shift;;',
      '  -*) echo "podman stand-in: unexpected option $1" >&2; exit 125;;',
      '  *) break;;',
      'esac; done',
      'shift # the image',
      'host="${volume%%:*}"; inside="${volume#*:}"; inside="${inside%%:*}"',
      `exec '${process.execPath}' '${MAIN}' "\${@//$inside/$host}"`,
    ].join('\n'),
  );
}

/** The script as greenboot runs it, with the device's settings file and MicroShift's functions. */
async function runCheck(
  settings: Record<string, string>,
  env: Record<string, string> = {},
): Promise<{ status: number | null; output: string }> {
  const file = join(dir, 'greenboot.env');
  writeFileSync(
    file,
    Object.entries(settings)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(''),
  );
  for (const log of Object.values(logs)) writeFileSync(log, '');
  const r = await runToEnd('bash', [SCRIPT], {
    env: {
      PATH: `${shims}${delimiter}${process.env.PATH ?? ''}`,
      SNAPSHOT_WEBHOOK_GREENBOOT_ENV: file,
      MICROSHIFT_GREENBOOT_FUNCTIONS: FUNCTIONS,
      MICROSHIFT_WAIT_TIMEOUT_SEC: '60',
      ...env,
    },
    timeoutMs: 150_000,
  });
  const output = `${r.stdout}${r.stderr}`;
  t.comment(`greenboot check -> ${r.status}: ${output.trim()}`);
  return { status: r.status, output };
}

const read = (log: string): string => readFileSync(log, 'utf8').trim();
let device: Record<string, string>;

t.before(async () => {
  cluster = await startCluster(dir);
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  await installCrds(kc, 'current');
  await untilServedFromCache(kc, 'current');
  webhook = await startWebhook(dir, cluster.kubeconfig);
  await registerWebhook(kc, webhook.port, webhook.caBundle);
  await untilCalled(kc);
  await snapshotObjects(kc).create(VSCLASS, klass(VSCLASS, 'device-default', DRIVER, true));
  writeShims();
  device = { SNAPSHOT_WEBHOOK_IMAGE: IMAGE, SNAPSHOT_WEBHOOK_KUBECONFIG: cluster.kubeconfig };
});

t.test('live: the Deployment waited for within the budget, then the check in the image; exit 0', async (t) => {
  const r = await runCheck(device);
  t.equal(r.status, 0, r.output);
  t.match(r.output, /^The default-class rule is live:/m);
  t.equal(
    read(logs.microshift),
    'healthcheck -v=2 --timeout=60s --namespace snapshot-webhook --deployments snapshot-webhook',
    "MicroShift's healthcheck, with get_wait_timeout's budget (60 s base, boot attempt 1 of 3)",
  );
  const podman = read(logs.podman);
  t.match(podman, ` ${IMAGE} check --kubeconfig /run/snapshot-webhook/kubeconfig --wait `, 'the pinned image runs check');
  const left = Number(/--wait (\d+)s/.exec(podman)?.[1]);
  t.ok(left > 0 && left <= 60, `check waits for what is left of the budget (${left} s)`);
  t.match(podman, '--cap-drop all', 'with no capability');
});

t.test('a later boot attempt gets a longer budget, as MicroShift computes it', async (t) => {
  const r = await runCheck(device, { TEST_BOOT_COUNTER: '0' });
  t.equal(r.status, 0, r.output);
  t.match(read(logs.microshift), '--timeout=180s', 'attempt 3 of 3: 3 x 60 s');
});

t.test('the Deployment not ready: exit 1, and no check run', async (t) => {
  const r = await runCheck(device, { TEST_HEALTHCHECK_STATUS: '1' });
  t.equal(r.status, 1);
  t.match(r.output, 'the Deployment snapshot-webhook/snapshot-webhook is not ready within 60 s');
  t.equal(read(logs.podman), '', 'podman not run');
});

t.test('no image in the settings: exit 1, saying so', async (t) => {
  const r = await runCheck({ SNAPSHOT_WEBHOOK_KUBECONFIG: device.SNAPSHOT_WEBHOOK_KUBECONFIG ?? '' });
  t.equal(r.status, 1);
  t.match(r.output, 'SNAPSHOT_WEBHOOK_IMAGE is not set');
});

t.test('the policy-only overlay (no Deployment): the check alone', async (t) => {
  const r = await runCheck({ ...device, SNAPSHOT_WEBHOOK_DEPLOYMENT: 'none' });
  t.equal(r.status, 0, r.output);
  t.equal(read(logs.microshift), '', 'no Deployment waited for');
});

t.test('the rule not live for the whole budget: a Not ready line per try, exit 1', async (t) => {
  const kc = new KubeConfig();
  kc.loadFromFile((cluster as TestCluster).kubeconfig);
  await registerWebhook(kc, await freePort(), (webhook as TestWebhook).caBundle);
  // Until the apiserver uses the new registration (it takes a moment), so that no try still sees the old one.
  const kubeconfig = `--kubeconfig=${(cluster as TestCluster).kubeconfig}`;
  await waitFor(
    'the dead registration in use',
    async () => spawnSync(process.execPath, [MAIN, 'check', kubeconfig]).status === 1,
    20_000,
    250,
  );
  const r = await runCheck(device);
  t.equal(r.status, 1);
  t.match(r.output, /^Not ready: validation-webhook\.snapshot\.storage\.k8s\.io refuses connections/m);
  t.match(r.output, 'the default-class rule is not live after 60 s: failing the boot');
});
