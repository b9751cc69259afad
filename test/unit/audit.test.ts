import { readFileSync } from 'node:fs';
import t from 'tap';
import { ApiserverError } from '../../src/cluster/apiserver-error.js';
import { parseAllDocuments } from 'yaml';
import { AUDIT_FLAGS, auditCluster, type AuditCluster } from '../../src/cli/audit-command.js';
import { exitStatus, formatText } from '../../src/cli/format-findings.js';
import { listProblem, type ServedVersion } from '../../src/cluster/list-snapshot-objects.js';
import { allRoutes } from '../../src/rules/table.js';
import { readJson } from '../helpers/fixtures.js';

const DIR = 'test/fixtures/audit';

interface Case {
  description: string;
  /** Per group, its versions: a name serves every kind; `{version, resources}` only those. */
  served: Record<string, (string | ServedVersion)[]> | 'unreachable';
  fail: Record<string, number>;
  exit: number;
  lines?: string[];
  notes?: string[];
  count?: { checked: number; unreadable: number };
}

const objects = parseAllDocuments(readFileSync(`${DIR}/cluster.yaml`, 'utf8')).map((d) => d.toJS() as Record<string, unknown>);

/** A cluster that serves the fixture's objects at the versions a case names, two objects per page. */
function fakeCluster(c: Case, pagesRead: string[]): AuditCluster {
  return {
    servedVersions: async (group) => {
      if (c.served === 'unreachable') throw new Error('connect ECONNREFUSED 127.0.0.1:6443');
      const every = [...new Set([...allRoutes().values()].filter((r) => r.group === group).map((r) => r.resource))];
      return (c.served[group] ?? []).map((v) => (typeof v === 'string' ? { version: v, resources: every } : v));
    },
    listPages: async function* (target) {
      const status = c.fail[`${target.resource}.${target.version}.${target.group}`];
      if (status !== undefined) throw new ApiserverError(`HTTP ${status}`, status);
      const items = objects
        .filter((o) => o.kind === target.kind)
        .map((o) => ({ ...o, apiVersion: `${target.group}/${target.version}` }));
      for (let i = 0; i < items.length; i += 2) {
        pagesRead.push(`${target.resource}.${target.version}`);
        yield items.slice(i, i + 2);
      }
    },
    problem: listProblem,
  };
}

for (const c of readJson<Case[]>(`${DIR}/cases.json`)) {
  t.test(c.description, async (t) => {
    const pages: string[] = [];
    const { findings, notes, summary } = await auditCluster(fakeCluster(c, pages), { preventVolumeModeConversion: true });
    t.equal(exitStatus(summary), c.exit, 'exit status');
    if (c.lines !== undefined) t.same(formatText(findings, summary).trimEnd().split('\n'), c.lines);
    if (c.notes !== undefined) t.same(notes, c.notes);
    if (c.count !== undefined) t.match(summary, c.count);
    if (c.served !== 'unreachable' && (c.served['snapshot.storage.k8s.io']?.length ?? 0) > 0)
      t.ok(pages.filter((p) => p.startsWith('volumesnapshots.')).length >= 2, 'read in pages');
  });
}

t.test('docs/cli.md documents audit as it is: its flags, both ways, and its messages', async (t) => {
  const docs = readFileSync('docs/cli.md', 'utf8');
  const section = docs.slice(docs.indexOf('## `snapshot-webhook audit'), docs.indexOf('## `snapshot-webhook review'));
  const documented = [...section.matchAll(/^\| (?:`-[a-z]`, )?`--([a-z-]+)[^`]*` +\|/gm)].map((m) => m[1]).sort();
  t.same(
    documented,
    AUDIT_FLAGS.map((f) => f.name)
      .filter((n) => n !== 'help')
      .sort(),
  );
  const [first] = readJson<Case[]>(`${DIR}/cases.json`);
  const flat = section.replace(/\s+/g, ' ');
  t.ok(flat.includes(first?.notes?.[0] ?? '(none)'), 'the not-served note');
  const forbidden = first?.lines?.find((l) => l.includes('forbidden')) ?? '(none)';
  t.ok(flat.includes(forbidden.slice(forbidden.indexOf(': ') + 2)), 'the forbidden message');
});

t.test("each snapshot not ready to use is a warning with explain's cause; it changes no exit status", async (t) => {
  const c = readJson<Case[]>(`${DIR}/cases.json`)[1] as Case;
  const asked: string[] = [];
  const cluster: AuditCluster = {
    ...fakeCluster(c, []),
    explain: async (namespace, name) => {
      asked.push(`${namespace}/${name}`);
      if (name === 'good-2') return undefined; // deleted between the list and the explanation
      return { ready: false, cause: 'no-default-class', message: 'no class named and no default', chain: [] };
    },
  };
  const { findings, summary } = await auditCluster(cluster, { preventVolumeModeConversion: true });
  const snapshots = objects.filter((o) => o.kind === 'VolumeSnapshot');
  t.same(
    asked,
    snapshots.map((o) => `apps/${(o.metadata as { name: string }).name}`),
    'each snapshot is explained once',
  );
  const notReady = findings.filter((f) => f.rule === 'not-ready');
  t.same(
    notReady.map((f) => `${f.severity} ${f.namespace}/${f.name}: ${f.message}`),
    [
      'warning apps/good-1: not ready (no-default-class): no class named and no default',
      'warning apps/both-sources: not ready (no-default-class): no class named and no default',
    ],
  );
  t.equal(exitStatus(summary), c.exit, 'the exit status is what the rules make it');
});
