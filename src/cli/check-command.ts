import { flagString, formatHelp, parseFlags, TEXT_OR_JSON_OUTPUT, UsageError, type FlagSpec } from '../config/flags.js';
import type { CheckCluster } from '../cluster/live-check-api.js';
import { checkOnce, type CheckResult } from './live-check.js';

export const CHECK_FLAGS: readonly FlagSpec[] = [
  { name: 'kubeconfig', type: 'string', help: 'the cluster (default: $KUBECONFIG, else the in-cluster service account)' },
  {
    name: 'wait',
    type: 'string',
    default: '0',
    help: 'try again every 2 s until the rule is live or this long has passed (90s, 2m, 1h30m)',
  },
  TEXT_OR_JSON_OUTPUT,
  { name: 'help', type: 'bool', help: 'print this help' },
];

const USAGE = `Usage: snapshot-webhook check [flags]

Proves through the apiserver that a second default VolumeSnapshotClass would be denied now: a dry-run create of a
second default for the driver of an existing default (on a cluster with none, for a driver of its own after a
first default made for it and deleted again). When the rule is not live it prints one "Not ready:" line per cause.
Exit 0 when it is live, 1 when it is not (after --wait), 2 for a usage error.`;

/** How often a waiting check tries again: cmctl check api's pace. */
export const RETRY_MS = 2_000;
const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** A Go duration (`90s`, `2m`, `1h30m`, `0`) in ms. */
export function parseDuration(text: string): number {
  if (text === '0') return 0;
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text)
    throw new UsageError(`--wait: expected a duration such as 90s, 2m or 1h30m, got ${JSON.stringify(text)}`);
  return parts.reduce((sum, [, n = '0', unit = 's']) => sum + Number(n) * (UNITS[unit] ?? 0), 0);
}

/** The line for a live rule. */
function liveLine(result: CheckResult): string {
  return `The default-class rule is live: a second default VolumeSnapshotClass for driver ${result.driver ?? ''} was denied (dry run): ${result.denial ?? ''}\n`;
}

/**
 * Tries until live or `waitMs` has passed, printing each try's causes as they come (text) or the last try (json).
 * `cluster`, `sleep` and `now` come from the caller, so that a test can run it against a fake and its own clock.
 */
export async function runChecks(
  cluster: CheckCluster,
  options: {
    waitMs: number;
    output: 'text' | 'json';
    write: (text: string) => void;
    sleep?: (ms: number) => Promise<void>;
    now?: () => number;
  },
): Promise<number> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const now = options.now ?? Date.now;
  const deadline = now() + options.waitMs;
  const run = `${now().toString(36)}-${Math.floor(Math.random() * 36 ** 4).toString(36)}`;
  for (let tries = 1; ; tries += 1) {
    let result: CheckResult;
    try {
      result = await checkOnce(cluster, run);
    } catch (error) {
      result = {
        live: false,
        causes: [{ cause: 'apiserver', message: `cannot ask the apiserver: ${(error as Error).message}` }],
      };
    }
    const last = result.live || now() + RETRY_MS > deadline;
    if (options.output === 'json' && last) options.write(`${JSON.stringify({ ...result, tries }, null, 2)}\n`);
    if (options.output === 'text')
      options.write(result.live ? liveLine(result) : result.causes.map((c) => `Not ready: ${c.message}\n`).join(''));
    if (last) return result.live ? 0 : 1;
    await sleep(RETRY_MS);
  }
}

/** `snapshot-webhook check`. */
export async function runCheck(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help')) {
    process.stdout.write(formatHelp(USAGE, CHECK_FLAGS));
    return 0;
  }
  const flags = parseFlags(CHECK_FLAGS, argv, {});
  if (flags.positionals.length > 0) throw new UsageError(`check takes no argument, got ${flags.positionals[0] ?? ''}`);
  const waitMs = parseDuration(flagString(flags, 'wait') ?? '0');
  // Loaded only here: the Kubernetes client is large.
  const { loadKubeConfig } = await import('../cluster/client-node-api.js');
  const { checkCluster } = await import('../cluster/live-check-api.js');
  let kc;
  try {
    kc = loadKubeConfig(flagString(flags, 'kubeconfig'));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return runChecks(checkCluster(kc), {
    waitMs,
    output: flagString(flags, 'output') === 'json' ? 'json' : 'text',
    write: (text) => process.stdout.write(text),
  });
}
