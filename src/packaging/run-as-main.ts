import { realpathSync } from 'node:fs';

/** Whether the module of `meta` is the script node was started with (through a symlink, too). */
export function isMainModule(meta: ImportMeta): boolean {
  const script = process.argv[1];
  return script !== undefined && meta.filename === realpathSync(script);
}
