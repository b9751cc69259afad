import { stringify } from 'yaml';
import { flagBool, flagString, formatHelp, parseFlags, UsageError, type FlagSpec } from '../config/flags.js';
import { defaultClassPolicies, type PolicyOptions } from '../policy/default-class-policy.js';

export const POLICY_FLAGS: readonly FlagSpec[] = [
  { name: 'group-snapshots', type: 'bool', help: 'also the policy for VolumeGroupSnapshotClass' },
  {
    name: 'api-version',
    type: 'string',
    default: 'v1',
    values: ['v1', 'v1beta1'],
    help: 'admissionregistration.k8s.io version: v1 (Kubernetes 1.30+) or v1beta1 (1.28 and 1.29)',
  },
  {
    name: 'group-version',
    type: 'string',
    default: 'v1beta2',
    values: ['v1beta1', 'v1beta2', 'v1'],
    help: 'served groupsnapshot.storage.k8s.io version the group classes are read at',
  },
  { name: 'name-prefix', type: 'string', help: 'prefix of the policy and binding names (none by default)' },
  { name: 'help', type: 'bool', help: 'print this help' },
];

export const POLICY_USAGE = 'Usage: snapshot-webhook policy [flags]';

/** The options of `snapshot-webhook policy`, checked. */
export function parsePolicyOptions(argv: readonly string[]): PolicyOptions {
  const flags = parseFlags(POLICY_FLAGS, argv, {});
  if (flags.positionals.length > 0) throw new UsageError(`unexpected argument ${flags.positionals[0]}`);
  const namePrefix = flagString(flags, 'name-prefix') ?? '';
  if (!/^([a-z0-9][-a-z0-9.]*)?$/.test(namePrefix) || namePrefix.length > 200) {
    throw new UsageError(`--name-prefix ${JSON.stringify(namePrefix)}: lower-case letters, digits, '-' and '.' only`);
  }
  return {
    groupSnapshots: flagBool(flags, 'group-snapshots'),
    apiVersion: flagString(flags, 'api-version') as PolicyOptions['apiVersion'],
    groupVersion: flagString(flags, 'group-version') as string,
    namePrefix,
  };
}

/** The policies as multi-document YAML. */
export function policyYaml(options: PolicyOptions): string {
  return defaultClassPolicies(options)
    .map((doc) => stringify(doc, { lineWidth: 0 }))
    .join('---\n');
}

/** `snapshot-webhook policy`: prints the ValidatingAdmissionPolicies of the default-class rule as YAML. */
export async function runPolicy(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(formatHelp(POLICY_USAGE, POLICY_FLAGS));
    return 0;
  }
  process.stdout.write(policyYaml(parsePolicyOptions(argv)));
  return 0;
}
