import type { KubeConfig } from '@kubernetes/client-node';
import { flagString, formatHelp, parseFlags, TEXT_OR_JSON_OUTPUT, UsageError, type FlagSpec } from '../config/flags.js';
import { explainSnapshot, type Explanation, type Found, type SnapshotWorld } from '../explain/snapshot-causes.js';

export const EXPLAIN_FLAGS: readonly FlagSpec[] = [
  { name: 'namespace', short: 'n', type: 'string', default: 'default', help: "the snapshot's namespace" },
  { name: 'kubeconfig', type: 'string', help: 'the cluster (default: $KUBECONFIG, else the in-cluster config)' },
  TEXT_OR_JSON_OUTPUT,
  { name: 'help', type: 'bool', help: 'print this help' },
];

const USAGE =
  'Usage: snapshot-webhook explain [-n NAMESPACE] volumesnapshot/NAME   (read-only: why it is not ready, and what to do)';

/** Exit codes (docs/cli.md "explain"): 0 ready, 1 not ready with its cause, 2 usage, 3 the snapshot cannot be read. */
export const EXPLAIN_EXIT = { ready: 0, notReady: 1, usage: 2, unreadable: 3 } as const;

const SNAPSHOT_KINDS = new Set(['volumesnapshot', 'volumesnapshots', 'vs']);

/** `volumesnapshot/NAME` (or `vs/NAME`, any case of the kind) -> NAME; anything else is a usage error. */
export function snapshotName(argument: string | undefined): string {
  const at = argument?.indexOf('/') ?? -1;
  const kind = argument?.slice(0, at).toLowerCase() ?? '';
  const name = argument?.slice(at + 1) ?? '';
  if (argument === undefined || at <= 0 || name === '')
    throw new UsageError(`explain takes one KIND/NAME, such as volumesnapshot/my-snapshot. ${USAGE}`);
  if (!SNAPSHOT_KINDS.has(kind))
    throw new UsageError(`explain reads VolumeSnapshots (volumesnapshot/NAME), not ${JSON.stringify(kind)}. ${USAGE}`);
  return name;
}

/** The text for people: the one line, then the chain it followed. */
export function formatExplanation(e: Explanation): string {
  const chain = e.chain.map((link) => `  ${link.step.padEnd(13)} ${link.found}`).join('\n');
  return `${e.ready ? 'Ready' : 'Not ready'}: ${e.message}\n${chain}\n`;
}

/** The explanation of one snapshot read by `read`, written by `write`; the exit code. */
export async function explain(
  read: () => Promise<Found<SnapshotWorld>>,
  what: string,
  output: 'text' | 'json',
  write: (text: string) => void,
): Promise<number> {
  const world = await read();
  if (!('found' in world)) {
    const reason = 'missing' in world ? `${what} does not exist` : `cannot read ${what}: ${world.unknown}`;
    write(output === 'json' ? `${JSON.stringify({ error: reason }, null, 2)}\n` : `${reason}\n`);
    return EXPLAIN_EXIT.unreadable;
  }
  const explanation = explainSnapshot(world.found);
  write(output === 'json' ? `${JSON.stringify(explanation, null, 2)}\n` : formatExplanation(explanation));
  return explanation.ready ? EXPLAIN_EXIT.ready : EXPLAIN_EXIT.notReady;
}

/** `snapshot-webhook explain`. */
export async function runExplain(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help')) {
    process.stdout.write(formatHelp(USAGE, EXPLAIN_FLAGS));
    return 0;
  }
  const flags = parseFlags(EXPLAIN_FLAGS, argv, {});
  if (flags.positionals.length !== 1) throw new UsageError(`explain takes one KIND/NAME. ${USAGE}`);
  const name = snapshotName(flags.positionals[0]);
  const namespace = flagString(flags, 'namespace') ?? 'default';
  // Only here: the Kubernetes client is large and slow to load.
  const { loadKubeConfig } = await import('../cluster/client-node-api.js');
  const { readSnapshotWorld } = await import('../cluster/explain-reads.js');
  let kc: KubeConfig;
  try {
    kc = loadKubeConfig(flagString(flags, 'kubeconfig'));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return explain(
    () => readSnapshotWorld(kc, namespace, name),
    `VolumeSnapshot ${namespace}/${name}`,
    flagString(flags, 'output') === 'json' ? 'json' : 'text',
    (text) => process.stdout.write(text),
  );
}
