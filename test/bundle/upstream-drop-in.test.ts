// "Drop-in" kept honest against the real upstream webhook v7.0.2: every flag its binary accepts is accepted here,
// and every decision on the admission fixtures that differs from it is listed, with its direction, in
// docs/rules.md "Decisions that differ from v7.0.2, measured".
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { reviewAdmission } from '../../src/admission/review.js';
import { parseServeOptions } from '../../src/config/serve-options.js';
import { startBuiltServer } from '../helpers/built-server.js';
import { classSet, FIXTURES, filesUnder, fixtureName, readJson } from '../helpers/fixtures.js';
import { missingTool, unpackTool } from '../helpers/tools.mjs';

interface Fixture {
  classes: string;
  options?: { preventVolumeModeConversion?: boolean };
  review: unknown;
}
type Decision = 'allowed' | 'denied';
interface Row {
  globs: RegExp[];
  text: string;
  upstream: Decision;
  here: Decision;
}

// The upstream webhook is built by the user (README "Optional programs"): without it both tests skip, naming it.
const skip = missingTool('upstream-webhook') ?? false;

/** The docs' table: each row's fixture globs (`*` is any part of a name) and its two decisions. */
function documentedRows(): { rows: Row[]; claimed: [number, number] } {
  const rules = readFileSync('docs/rules.md', 'utf8');
  const section = rules.split('### Decisions that differ from v7.0.2, measured')[1]?.split('\n### ')[0] ?? '';
  const claim = /\*\*(\d+) of (\d+)\*\*\s+decisions differ/.exec(section);
  const rows = section
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .map((line) => {
      const [fixtures = '', upstream = '', here = ''] = line.split(' | ').map((c) => c.replace(/^\| /, ''));
      const word = (cell: string): Decision => (/^denied/.test(cell) ? 'denied' : 'allowed');
      const globs = [...fixtures.matchAll(/`([^`]+)`/g)].map(
        ([, g]) => new RegExp(`^admission/${(g as string).replace(/[.]/g, '\\.').replace(/\*/g, '[^/]*')}\\.json$`),
      );
      return { globs, text: fixtures, upstream: word(upstream), here: word(here) };
    });
  return { rows, claimed: [Number(claim?.[1]), Number(claim?.[2])] };
}

async function ourDecision(fixture: Fixture): Promise<Decision> {
  const outcome = await reviewAdmission(fixture.review, {
    classes: classSet(fixture.classes),
    options: { preventVolumeModeConversion: fixture.options?.preventVolumeModeConversion ?? true },
    modes: { mode: 'enforce', warnRules: new Set() },
  });
  return outcome.body.response.allowed ? 'allowed' : 'denied';
}

t.test('every decision that differs from v7.0.2 is listed in docs/rules.md, in its direction', { skip }, async (t) => {
  const measured = JSON.parse(
    execFileSync(process.execPath, ['test/helpers/upstream-decisions.mjs'], { encoding: 'utf8', timeout: 150_000 }),
  ) as Record<string, { allowed: boolean; message: string }>;
  const { rows, claimed } = documentedRows();
  t.ok(rows.length > 0, 'the table is there');
  const used = new Set<Row>();
  const unlisted: string[] = [];
  let differ = 0;
  for (const file of filesUnder(`${FIXTURES}admission`)) {
    const name = fixtureName(file);
    const upstream = measured[name];
    if (upstream === undefined) continue;
    const here = await ourDecision(readJson<Fixture>(file));
    if ((upstream.allowed ? 'allowed' : 'denied') === here) continue;
    differ++;
    const row = rows.find((r) => r.globs.some((g) => g.test(name)));
    if (row === undefined) {
      unlisted.push(`${name}: v7.0.2 ${upstream.allowed ? 'allowed' : `denied (${upstream.message})`}, here ${here}`);
      continue;
    }
    used.add(row);
    t.equal(row.here, here, `${name}: the row ${row.text} says here ${row.here}`);
  }
  t.same(unlisted, [], 'differences no row of the table names');
  t.same(
    rows.filter((r) => !used.has(r)).map((r) => r.text),
    [],
    'rows that name no measured difference',
  );
  t.ok(Object.keys(measured).length > 300, `v7.0.2 answered ${Object.keys(measured).length} fixtures`);
  t.same(claimed, [differ, Object.keys(measured).length], `the docs say **${differ} of ${Object.keys(measured).length}**`);
  t.ok(
    rows.every((r) => r.upstream !== r.here),
    'each row differs in its two decisions',
  );
});

/** The flags of upstream's `--help` (its own and klog's), each with a value of its type when it takes one. */
function upstreamFlags(binary: string): string[] {
  const help = execFileSync(binary, ['--help'], { encoding: 'utf8' });
  const samples: Record<string, string> = {
    string: 'x',
    int: '1',
    uint: '1',
    Level: '2',
    traceLocation: 'file.go:1',
    severity: 'ERROR',
    moduleSpec: 'webhook=4',
  };
  return [...help.matchAll(/^\s+(?:-\w, )?--([\w-]+)(?: (\w+))?\s{2}/gm)]
    .filter(([, name]) => name !== 'help')
    .map(([, name, type]) => (type === undefined ? `--${name}` : `--${name}=${samples[type] ?? 'x'}`));
}

t.test("every flag upstream's binary accepts is accepted; klog's logging flags are named in one warning", { skip }, async (t) => {
  const work = mkdtempSync(join(tmpdir(), 'sw-flags-'));
  t.teardown(() => rmSync(work, { recursive: true, force: true }));
  const flags = upstreamFlags(unpackTool('upstream-webhook', join(work, 'upstream')));
  t.ok(flags.length >= 18, `upstream has ${flags.length} flags`);
  const ours = flags.filter((f) => !/^--(tls-|port|kubeconfig)/.test(f));
  for (const flag of ours) {
    t.doesNotThrow(() => parseServeOptions(['--tls-cert-file=c', '--tls-private-key-file=k', flag], {}), flag);
  }
  const server = await startBuiltServer(t, { args: ['--logtostderr', '--alsologtostderr', '-v=2', '--vmodule=x=4'] });
  const warnings = server
    .output()
    .split('\n')
    .filter((l) => l.includes('klog flags accepted and ignored'));
  t.equal(warnings.length, 1, 'one warning line');
  t.same((JSON.parse(warnings[0] ?? '{}') as { flags?: string[] }).flags, ['--logtostderr', '--alsologtostderr', '--vmodule']);
});
