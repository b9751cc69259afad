// One module of bounds (src/limits/bounds.ts), the table of docs/reliability.md that lists it, and no bound
// written as a bare number elsewhere in src/.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { BOUND_REASONS, BOUNDS } from '../../src/limits/bounds.js';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.generated.ts') ? [path] : [];
  });
}

t.test('docs/reliability.md lists every bound with its value and reason, and nothing else', async (t) => {
  const text = readFileSync('docs/reliability.md', 'utf8');
  const section = text.slice(text.indexOf('## Bounds'), text.indexOf('\n## ', text.indexOf('## Bounds') + 1));
  const rows = [...section.matchAll(/^\| `(\w+)` +\| ([0-9]+) +\| (.+?) +\|$/gm)].map((m) => [m[1], Number(m[2]), m[3]]);
  const expected = Object.entries(BOUNDS).map(([name, value]) => [name, value, BOUND_REASONS[name as keyof typeof BOUNDS]]);
  t.same(rows, expected);
});

t.test('no numeric slice bound outside the bounds module', async (t) => {
  const bare = sources('src').flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/\.slice\(0, [0-9]/g)].map(() => file));
  t.same(bare, []);
});
