import { readFileSync } from 'node:fs';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { describePermission, PermissionCheck, requiredPermissions, type Permission } from '../../src/cluster/permissions.js';
import { createLogger } from '../../src/log/logger.js';
import { memoryLog } from '../helpers/review-deps.js';

const NS = 'snapshot-webhook';

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
}

t.test('the permissions asked are exactly what manifests/base/rbac.yaml grants (but discovery)', async (t) => {
  const rules = parseAllDocuments(readFileSync('manifests/base/rbac.yaml', 'utf8'))
    .map((d) => d.toJS() as { kind: string; rules?: Rule[] })
    .filter((d) => d.kind === 'ClusterRole' || d.kind === 'Role')
    .flatMap((d) => d.rules ?? []);
  const granted = (p: Permission): boolean =>
    rules.some(
      (r) =>
        (r.apiGroups ?? []).includes(p.group) &&
        (r.resources ?? []).includes(p.resource) &&
        r.verbs.includes(p.verb) &&
        (r.resourceNames === undefined || (p.name !== undefined && r.resourceNames.includes(p.name))),
    );
  for (const p of requiredPermissions(NS)) t.ok(granted(p), `${describePermission(p)} is granted`);
  t.same(requiredPermissions(NS).map(describePermission), [
    'list volumesnapshotclasses.snapshot.storage.k8s.io',
    'watch volumesnapshotclasses.snapshot.storage.k8s.io',
    'list volumegroupsnapshotclasses.groupsnapshot.storage.k8s.io',
    'watch volumegroupsnapshotclasses.groupsnapshot.storage.k8s.io',
    'create leases.coordination.k8s.io in snapshot-webhook',
    'get leases.coordination.k8s.io/snapshot-webhook-default-volumesnapshotclass in snapshot-webhook',
    'update leases.coordination.k8s.io/snapshot-webhook-default-volumesnapshotclass in snapshot-webhook',
    'get leases.coordination.k8s.io/snapshot-webhook-default-volumegroupsnapshotclass in snapshot-webhook',
    'update leases.coordination.k8s.io/snapshot-webhook-default-volumegroupsnapshotclass in snapshot-webhook',
    'create events',
  ]);
});

t.test('a missing permission: one error line, a problem, until granted again (one info line)', async (t) => {
  const log = memoryLog();
  let allowed = (p: Permission): boolean => p.resource !== 'leases' || p.verb !== 'update';
  let unreachable = false;
  const check = new PermissionCheck(
    async (p) => {
      if (unreachable) throw new Error('connect ECONNREFUSED');
      return allowed(p);
    },
    createLogger('debug', log.stream),
    requiredPermissions(NS),
  );
  await check.check();
  await check.check();
  const errors = () => log.lines.filter((l) => l.level === 50).map((l) => l.msg);
  t.same(errors(), [
    'missing permission: cannot update leases.coordination.k8s.io/snapshot-webhook-default-volumesnapshotclass in snapshot-webhook: new default classes are answered 503 (the claim cannot be recorded); see manifests/base/rbac.yaml',
    'missing permission: cannot update leases.coordination.k8s.io/snapshot-webhook-default-volumegroupsnapshotclass in snapshot-webhook: new default classes are answered 503 (the claim cannot be recorded); see manifests/base/rbac.yaml',
  ]);
  t.equal(check.problems().length, 2, 'two problems');
  unreachable = true;
  await check.check();
  t.equal(check.missing().length, 2, 'an apiserver that cannot answer leaves the last answers');
  unreachable = false;
  allowed = () => true;
  await check.check();
  t.same(check.problems(), [], 'granted again');
  t.equal(log.lines.filter((l) => String(l.msg).startsWith('permission granted again')).length, 2, 'said once each');
  t.equal(errors().length, 2, 'no new error line');
});

t.test('start asks at once and then on its interval; stop waits for a round in flight', async (t) => {
  let asked = 0;
  const check = new PermissionCheck(
    async () => {
      asked += 1;
      return true;
    },
    createLogger('info', memoryLog().stream),
    requiredPermissions(NS),
    20,
  );
  check.start();
  await new Promise((r) => setTimeout(r, 70));
  await check.stop();
  const after = asked;
  t.ok(after >= requiredPermissions(NS).length * 2, `asked again on the interval (${after} reviews)`);
  await new Promise((r) => setTimeout(r, 50));
  t.equal(asked, after, 'nothing asked after stop');
});
