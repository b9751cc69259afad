import { flagString, formatHelp, parseFlags, UsageError, type FlagSpec } from '../config/flags.js';

const FLAGS: readonly FlagSpec[] = [
  { name: 'kubeconfig', type: 'string', help: 'the cluster (default: $KUBECONFIG, else the in-cluster service account)' },
  { name: 'help', type: 'bool', help: 'print this help' },
];

const USAGE = `Usage: snapshot-webhook migrate-storage [flags]

Rewrites every stored group snapshot object (VolumeGroupSnapshot, VolumeGroupSnapshotContent,
VolumeGroupSnapshotClass) at its CRD's storage version, then trims each CRD's status.storedVersions to it
(docs/conversion.md, "Storing v1"). Run it with the conversion webhook up, after the component
conversion-store-v1 made v1 the storage version. Exit 0 when every CRD is migrated, 1 when one is not.`;

/** `snapshot-webhook migrate-storage`: a line per CRD, what was rewritten and what is stored now. */
export async function runMigrateStorage(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help')) {
    process.stdout.write(formatHelp(USAGE, FLAGS));
    return 0;
  }
  const flags = parseFlags(FLAGS, argv, {});
  if (flags.positionals.length > 0) throw new UsageError(`unexpected argument ${flags.positionals[0]}`);
  // Loaded only here: the Kubernetes client is large.
  const { loadKubeConfig } = await import('../cluster/client-node-api.js');
  const { GROUP_SNAPSHOT_PLURALS, migrateStorage } = await import('../cluster/migrate-storage.js');
  let kc;
  try {
    kc = loadKubeConfig(flagString(flags, 'kubeconfig'));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  let failed = 0;
  for (const plural of GROUP_SNAPSHOT_PLURALS) {
    try {
      const m = await migrateStorage(kc, plural);
      const count = `${m.rewritten} object${m.rewritten === 1 ? '' : 's'}`;
      process.stdout.write(
        `${plural}: ${count} rewritten at ${m.storage}; storedVersions [${m.storedBefore.join(', ')}] -> [${m.storage}]\n`,
      );
    } catch (error) {
      failed += 1;
      process.stdout.write(`${plural}: not migrated, storedVersions left as they were: ${(error as Error).message}\n`);
    }
  }
  return failed === 0 ? 0 : 1;
}
