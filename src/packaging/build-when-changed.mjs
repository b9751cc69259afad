// `npm run build`: type-checks src/ into dist/ (tsc) and bundles it (dist/packaging/build-bundle.js), unless
// dist/bundle/main.js is newer than every file the build reads, so that `npm start`, `npm test` and the other
// scripts that build first start at once when nothing changed. `--force` builds anyway. Plain JavaScript: it runs
// before anything is compiled.
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;
const OUTPUT = join(ROOT, 'dist/bundle/main.js');
const INPUT_FOLDERS = ['src', 'schemas'];
const INPUT_FILES = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];

const mtime = (path) => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
};

/** The newest modification time of the build's inputs. */
function newestInput() {
  const files = [
    ...INPUT_FOLDERS.flatMap((folder) =>
      readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => join(entry.parentPath, entry.name)),
    ),
    ...INPUT_FILES.map((file) => join(ROOT, file)),
  ];
  return Math.max(...files.map((f) => mtime(f) ?? 0));
}

const built = mtime(OUTPUT);
if (process.argv.includes('--force') || built === undefined || newestInput() > built) {
  const run = (args) => execFileSync(process.execPath, args, { cwd: ROOT, stdio: 'inherit' });
  run([join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json']);
  run([join(ROOT, 'dist/packaging/build-bundle.js')]);
}
