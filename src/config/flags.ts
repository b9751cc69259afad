/**
 * A small, exact command-line parser: `--name=value`, `--name value`, and for booleans `--name`,
 * `--name=true|false` (what Go's pflag accepts, so upstream Deployment arguments keep working). Every flag
 * may also come from an environment variable; the command line wins.
 */
export type FlagType = 'string' | 'int' | 'bool' | 'list';

export interface FlagSpec {
  readonly name: string;
  readonly type: FlagType;
  readonly help: string;
  readonly env?: string;
  readonly default?: string;
  /** Allowed values, for a string or list flag. */
  readonly values?: readonly string[];
  readonly required?: boolean;
  /** A one-letter form, `-o value` for `--output value`. */
  readonly short?: string;
  readonly min?: number;
  readonly max?: number;
  /**
   * Accepted for upstream compatibility and otherwise ignored (klog's logging flags): any value is taken as
   * given, and the flag is named in `ParsedFlags.ignored` so that the caller can say so once.
   */
  readonly ignored?: true;
}

/** `-o text|json`, for the commands whose output is for people or for scripts (check, explain). */
export const TEXT_OR_JSON_OUTPUT: FlagSpec = {
  name: 'output',
  short: 'o',
  type: 'string',
  default: 'text',
  values: ['text', 'json'],
  help: 'text for people, json for scripts',
};

export type FlagValue = string | number | boolean | readonly string[];

/** A command line that cannot run as given: exit 2 with the message (main.ts recognises it by its class). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const BOOLEAN_WORDS: Readonly<Record<string, boolean>> = { true: true, '1': true, false: false, '0': false };

function wholeNumber(spec: FlagSpec, raw: string, where: string): number {
  const value = Number(raw);
  const inRange = Number.isInteger(value) && value >= (spec.min ?? -Infinity) && value <= (spec.max ?? Infinity);
  if (raw.trim() === '' || !inRange) {
    const range = spec.min !== undefined ? ` between ${spec.min} and ${spec.max}` : '';
    throw new UsageError(`${where}: expected a whole number${range}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

function convert(spec: FlagSpec, raw: string, source: string): FlagValue {
  const where = `${source} (--${spec.name})`;
  switch (spec.type) {
    case 'bool': {
      const value = BOOLEAN_WORDS[raw.toLowerCase()];
      if (value === undefined) throw new UsageError(`${where}: expected true or false, got ${JSON.stringify(raw)}`);
      return value;
    }
    case 'int':
      return wholeNumber(spec, raw, where);
    case 'list': {
      const items = raw
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      const bad = items.find((i) => spec.values !== undefined && !spec.values.includes(i));
      if (bad !== undefined)
        throw new UsageError(`${where}: unknown value ${JSON.stringify(bad)}; one of ${spec.values?.join(', ')}`);
      return items;
    }
    case 'string':
      if (spec.values !== undefined && !spec.values.includes(raw)) {
        throw new UsageError(`${where}: expected one of ${spec.values.join(', ')}, got ${JSON.stringify(raw)}`);
      }
      if (raw === '') throw new UsageError(`${where}: must not be empty`);
      return raw;
  }
}

export interface ParsedFlags {
  readonly values: ReadonlyMap<string, FlagValue>;
  readonly positionals: readonly string[];
  /** Flags given on the command line that are accepted and ignored, in the order given, each once. */
  readonly ignored: readonly string[];
}

function takeValue(spec: FlagSpec, inline: string | undefined, argv: readonly string[], i: number): [string, number] {
  if (inline !== undefined) return [inline, i];
  if (spec.type === 'bool') return ['true', i];
  const next = argv[i + 1];
  if (next === undefined || (next.startsWith('--') && next.length > 2)) throw new UsageError(`--${spec.name}: needs a value`);
  return [next, i + 1];
}

/** Parses argv (without node and the script) against the specs; throws UsageError naming the flag. */
export function parseFlags(specs: readonly FlagSpec[], argv: readonly string[], env: NodeJS.ProcessEnv): ParsedFlags {
  const byName = new Map(specs.map((s) => [s.name, s]));
  for (const s of specs) if (s.short !== undefined) byName.set(s.short, s);
  const values = new Map<string, FlagValue>();
  const positionals: string[] = [];
  const ignored: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    // Go's flag package also accepts a single dash for long flags.
    const match = /^--?([a-z][a-z0-9_-]*)(?:=(.*))?$/s.exec(arg);
    if (match === null || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const given = match[1] as string;
    const spec = byName.get(given);
    if (spec === undefined) throw new UsageError(`unknown flag ${given.length === 1 ? '-' : '--'}${given}; see --help`);
    const [raw, next] = takeValue(spec, match[2], argv, i);
    i = next;
    store(spec, raw, values, ignored);
  }
  for (const spec of specs) if (!values.has(spec.name) && spec.ignored !== true) setUnset(spec, values, env);
  return { values, positionals, ignored };
}

/**
 * One flag from the command line. An ignored flag is only named (a boolean still takes only true or false); a
 * repeated list flag adds to the list (as pflag's string slices do); any other flag's last value wins.
 */
function store(spec: FlagSpec, raw: string, values: Map<string, FlagValue>, ignored: string[]): void {
  if (spec.ignored === true) {
    if (spec.type === 'bool') convert(spec, raw, 'flag');
    if (!ignored.includes(spec.name)) ignored.push(spec.name);
    return;
  }
  const value = convert(spec, raw, 'flag');
  const before = values.get(spec.name);
  values.set(spec.name, Array.isArray(before) && Array.isArray(value) ? [...before, ...value] : value);
}

/** A flag not on the command line: from its environment variable, else its default, else required. */
function setUnset(spec: FlagSpec, values: Map<string, FlagValue>, env: NodeJS.ProcessEnv): void {
  const fromEnv = spec.env === undefined ? undefined : env[spec.env];
  if (fromEnv !== undefined && fromEnv !== '') values.set(spec.name, convert(spec, fromEnv, `environment ${spec.env}`));
  else if (spec.default !== undefined) values.set(spec.name, convert(spec, spec.default, 'default'));
  else if (spec.required === true) {
    throw new UsageError(`--${spec.name} is required${spec.env === undefined ? '' : ` (or set ${spec.env})`}`);
  }
}

/** Typed reads of parsed values; the specs guarantee the type. */
export function flagString(flags: ParsedFlags, name: string): string | undefined {
  const value = flags.values.get(name);
  return typeof value === 'string' ? value : undefined;
}

export function flagNumber(flags: ParsedFlags, name: string): number {
  const value = flags.values.get(name);
  if (typeof value !== 'number') throw new Error(`flag --${name} has no number value`);
  return value;
}

export function flagBool(flags: ParsedFlags, name: string): boolean {
  return flags.values.get(name) === true;
}

export function flagList(flags: ParsedFlags, name: string): readonly string[] {
  const value = flags.values.get(name);
  return Array.isArray(value) ? (value as readonly string[]) : [];
}

/** Help text: one line per flag with its environment variable and default. */
export function formatHelp(usage: string, specs: readonly FlagSpec[]): string {
  const ignored = specs.filter((s) => s.ignored === true).map((s) => `--${s.name}`);
  const lines = specs
    .filter((s) => s.ignored !== true)
    .map((s) => {
      const env = s.env === undefined ? '' : ` [$${s.env}]`;
      const def = s.default === undefined ? '' : ` (default ${s.default})`;
      const short = s.short === undefined ? '' : `-${s.short}, `;
      return `  ${short}--${s.name}${env}\n      ${s.help}${def}`;
    });
  const tail =
    ignored.length === 0
      ? ''
      : `\nAccepted for upstream compatibility and ignored (one warning names them):\n  ${ignored.join(' ')}\n`;
  return `${usage}\n\nFlags:\n${lines.join('\n')}\n${tail}`;
}
