import { CANNOT_ANSWER_RULES, RULE_IDS, type RuleId } from '../rules/finding.js';
import type { Mode } from '../rules/decide.js';
import { flagBool, flagList, flagNumber, flagString, parseFlags, UsageError, type FlagSpec } from './flags.js';

import { LOG_LEVELS, type LogLevel } from '../log/levels.js';

/** Rules an operator may put in warn-only mode (the cannot-answer rules always deny: never guess). */
const SOFTENABLE_RULES = RULE_IDS.filter((r) => !CANNOT_ANSWER_RULES.has(r));

/**
 * klog's flags, as upstream's main.go registers them (klog.InitFlags): an upstream Deployment passes them, and
 * they have no meaning for pino's JSON lines on stdout. Accepted with any value; serve logs one warning naming
 * those given. (`-v` is klog's too, and is honoured: see `v` below.)
 */
const KLOG_FLAGS: readonly FlagSpec[] = (
  [
    ['add_dir_header', 'bool'],
    ['alsologtostderr', 'bool'],
    ['log_backtrace_at', 'string'],
    ['log_dir', 'string'],
    ['log_file', 'string'],
    ['log_file_max_size', 'int'],
    ['logtostderr', 'bool'],
    ['one_output', 'bool'],
    ['skip_headers', 'bool'],
    ['skip_log_headers', 'bool'],
    ['stderrthreshold', 'string'],
    ['vmodule', 'string'],
  ] as const
).map(([name, type]) => ({ name, type, ignored: true, help: "klog's, accepted and ignored" }));

/** The flags of `snapshot-webhook serve`. The README's table is checked against this list by a test. */
export const SERVE_FLAGS: readonly FlagSpec[] = [
  {
    name: 'tls-cert-file',
    type: 'string',
    env: 'SNAPSHOT_WEBHOOK_TLS_CERT_FILE',
    required: true,
    help: 'PEM serving certificate (chain); reloaded when it changes',
  },
  {
    name: 'tls-private-key-file',
    type: 'string',
    env: 'SNAPSHOT_WEBHOOK_TLS_PRIVATE_KEY_FILE',
    required: true,
    help: 'PEM private key of the serving certificate',
  },
  {
    name: 'port',
    type: 'int',
    env: 'SNAPSHOT_WEBHOOK_PORT',
    default: '8443',
    min: 0,
    max: 65535,
    help: 'HTTPS port (0 picks a free one)',
  },
  {
    name: 'bind-address',
    type: 'string',
    env: 'SNAPSHOT_WEBHOOK_BIND_ADDRESS',
    default: '0.0.0.0',
    help: 'address to listen on; 127.0.0.1 for loopback only',
  },
  {
    name: 'kubeconfig',
    type: 'string',
    env: 'KUBECONFIG',
    help: 'kubeconfig of the cluster whose classes to watch; in a pod the in-cluster config is used',
  },
  {
    name: 'namespace',
    type: 'string',
    env: 'POD_NAMESPACE',
    help: "the webhook's namespace, where the default-class Leases live (cluster mode); the Deployment sets POD_NAMESPACE",
  },
  {
    name: 'classes-from',
    type: 'string',
    env: 'SNAPSHOT_WEBHOOK_CLASSES_FROM',
    help: 'file or folder of YAML/JSON class manifests standing for the cluster (standalone, no cluster)',
  },
  {
    name: 'prevent-volume-mode-conversion',
    type: 'bool',
    env: 'SNAPSHOT_WEBHOOK_PREVENT_VOLUME_MODE_CONVERSION',
    default: 'true',
    help: 'deny changing spec.sourceVolumeMode of a VolumeSnapshotContent',
  },
  {
    name: 'enable-volume-group-snapshot-webhook',
    type: 'bool',
    env: 'SNAPSHOT_WEBHOOK_ENABLE_VOLUME_GROUP_SNAPSHOT_WEBHOOK',
    default: 'true',
    help: 'accepted for upstream compatibility; group kinds are always checked',
  },
  {
    name: 'mode',
    type: 'string',
    env: 'SNAPSHOT_WEBHOOK_MODE',
    default: 'enforce',
    values: ['enforce', 'warn'],
    help: 'enforce denies; warn allows and returns the denial as a warning',
  },
  {
    name: 'warn-rules',
    type: 'list',
    env: 'SNAPSHOT_WEBHOOK_WARN_RULES',
    values: SOFTENABLE_RULES,
    help: `comma-separated rules that only warn: ${SOFTENABLE_RULES.join(', ')}`,
  },
  {
    name: 'log-level',
    type: 'string',
    env: 'SNAPSHOT_WEBHOOK_LOG_LEVEL',
    default: 'info',
    values: LOG_LEVELS,
    help: 'pino log level; debug logs requests and responses',
  },
  {
    name: 'v',
    type: 'int',
    env: 'SNAPSHOT_WEBHOOK_V',
    min: 0,
    max: 10,
    help: 'klog verbosity, accepted for upstream compatibility: 4 or more means --log-level=debug',
  },
  {
    name: 'shutdown-delay',
    type: 'int',
    env: 'SNAPSHOT_WEBHOOK_SHUTDOWN_DELAY',
    default: '5',
    min: 0,
    max: 300,
    help: 'seconds to keep serving after SIGTERM while endpoints drain',
  },
  {
    name: 'discovery-interval',
    type: 'int',
    env: 'SNAPSHOT_WEBHOOK_DISCOVERY_INTERVAL',
    default: '60',
    min: 1,
    max: 3600,
    help: 'seconds between checks of which class kinds the cluster serves',
  },
  {
    name: 'client-ca-file',
    type: 'string',
    env: 'SNAPSHOT_WEBHOOK_CLIENT_CA_FILE',
    help: 'PEM CA of the clients allowed to connect (mutual TLS): a connection without a client certificate from it is refused at the handshake',
  },
  {
    name: 'allowed-client-names',
    type: 'list',
    env: 'SNAPSHOT_WEBHOOK_ALLOWED_CLIENT_NAMES',
    help: 'with --client-ca-file: comma-separated names (certificate CN or DNS SAN) of the clients allowed; others are cut',
  },
  {
    name: 'probe-port',
    type: 'int',
    env: 'SNAPSHOT_WEBHOOK_PROBE_PORT',
    default: '0',
    min: 0,
    max: 65535,
    help: 'also serve /healthz, /readyz and /metrics over plain HTTP on this port (0: off); for kubelet probes with --client-ca-file',
  },
  { name: 'help', type: 'bool', help: 'print this help' },
  ...KLOG_FLAGS,
];

export interface ServeOptions {
  readonly tlsCertFile: string;
  readonly tlsKeyFile: string;
  readonly port: number;
  readonly bindAddress: string;
  readonly kubeconfig: string | undefined;
  readonly classesFrom: string | undefined;
  readonly namespace: string | undefined;
  readonly preventVolumeModeConversion: boolean;
  readonly mode: Mode;
  readonly warnRules: ReadonlySet<RuleId>;
  readonly logLevel: LogLevel;
  readonly shutdownDelayMs: number;
  readonly discoveryIntervalMs: number;
  readonly clientCaFile: string | undefined;
  readonly allowedClientNames: readonly string[];
  readonly probePort: number;
  /** Upstream's klog flags that were given: accepted, ignored, named in one warning at start. */
  readonly ignoredFlags: readonly string[];
}

export function parseServeOptions(argv: readonly string[], env: NodeJS.ProcessEnv): ServeOptions {
  const flags = parseFlags(SERVE_FLAGS, argv, env);
  const extra = flags.positionals[0];
  if (extra !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(extra)}; serve takes only flags`);
  const kubeconfig = flagString(flags, 'kubeconfig');
  const classesFrom = flagString(flags, 'classes-from');
  const explicitKubeconfig = argv.some((a) => /^--?kubeconfig(=|$)/.test(a));
  if (classesFrom !== undefined && explicitKubeconfig) {
    throw new UsageError('--classes-from and --kubeconfig both name where classes come from; give one');
  }
  const clientCaFile = flagString(flags, 'client-ca-file');
  const allowedClientNames = flagList(flags, 'allowed-client-names');
  if (allowedClientNames.length > 0 && clientCaFile === undefined) {
    throw new UsageError('--allowed-client-names needs --client-ca-file: only a verified certificate has a name to check');
  }
  const verbosity = flags.values.get('v');
  const level = (flagString(flags, 'log-level') ?? 'info') as LogLevel;
  return {
    tlsCertFile: flagString(flags, 'tls-cert-file') as string,
    tlsKeyFile: flagString(flags, 'tls-private-key-file') as string,
    port: flagNumber(flags, 'port'),
    bindAddress: flagString(flags, 'bind-address') as string,
    // --classes-from wins over a KUBECONFIG inherited from the shell: standalone was asked for.
    kubeconfig: classesFrom === undefined ? kubeconfig : undefined,
    classesFrom,
    namespace: flagString(flags, 'namespace'),
    preventVolumeModeConversion: flagBool(flags, 'prevent-volume-mode-conversion'),
    mode: flagString(flags, 'mode') as Mode,
    warnRules: new Set(flagList(flags, 'warn-rules') as RuleId[]),
    logLevel: typeof verbosity === 'number' && verbosity >= 4 && level === 'info' ? 'debug' : level,
    shutdownDelayMs: flagNumber(flags, 'shutdown-delay') * 1000,
    discoveryIntervalMs: flagNumber(flags, 'discovery-interval') * 1000,
    clientCaFile,
    allowedClientNames,
    probePort: flagNumber(flags, 'probe-port'),
    ignoredFlags: flags.ignored,
  };
}
