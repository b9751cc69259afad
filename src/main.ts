#!/usr/bin/env node
import { formatHelp, UsageError } from './config/flags.js';
import { parseServeOptions, SERVE_FLAGS } from './config/serve-options.js';

const USAGE = `snapshot-webhook: validating admission webhook for the CSI snapshot API

Usage:
  snapshot-webhook [serve] [flags]       serve AdmissionReviews over HTTPS (the default command)
  snapshot-webhook validate [flags] PATH... check manifests offline with the same rules
  snapshot-webhook audit [flags]         list what in a cluster the rules would deny now, and double defaults
  snapshot-webhook check [flags]         prove through the apiserver that a second default class is denied now
  snapshot-webhook explain [flags] volumesnapshot/NAME  say why a snapshot is not ready, and what to do
  snapshot-webhook review FILE           print the answer the server gives to an AdmissionReview
  snapshot-webhook certs [flags]         make a CA and serving certificate for the self-signed overlay
  snapshot-webhook policy [flags]        print the default-class rule as a ValidatingAdmissionPolicy (no pod)
  snapshot-webhook migrate-storage [flags] rewrite stored group snapshot objects at the storage version
  snapshot-webhook help [COMMAND]
  snapshot-webhook [COMMAND] --version   print the version`;

type Command = (argv: readonly string[]) => Promise<number>;

const commands: Readonly<Record<string, Command>> = {
  serve: async (argv) => {
    if (argv.includes('--help') || argv.includes('-h')) {
      process.stdout.write(formatHelp('Usage: snapshot-webhook serve [flags]', SERVE_FLAGS));
      return 0;
    }
    const options = parseServeOptions(argv, process.env);
    const { runServer } = await import('./server/run.js');
    return runServer(options);
  },
  validate: async (argv) => {
    const { runValidate } = await import('./cli/validate-command.js');
    return runValidate(argv);
  },
  audit: async (argv) => {
    const { runAudit } = await import('./cli/audit-command.js');
    return runAudit(argv);
  },
  check: async (argv) => {
    const { runCheck } = await import('./cli/check-command.js');
    return runCheck(argv);
  },
  explain: async (argv) => {
    const { runExplain } = await import('./cli/explain-command.js');
    return runExplain(argv);
  },
  review: async (argv) => {
    const { runReview } = await import('./cli/review-command.js');
    return runReview(argv);
  },
  certs: async (argv) => {
    const { runCerts } = await import('./certs/certs-command.js');
    return runCerts(argv);
  },
  policy: async (argv) => {
    const { runPolicy } = await import('./cli/policy-command.js');
    return runPolicy(argv);
  },
  'migrate-storage': async (argv) => {
    const { runMigrateStorage } = await import('./cli/migrate-storage-command.js');
    return runMigrateStorage(argv);
  },
  help: async (argv) => {
    const topic = argv[0];
    const command = topic === undefined ? undefined : commands[topic];
    if (command !== undefined && topic !== 'help') return command(['--help']);
    process.stdout.write(`${USAGE}\n`);
    return 0;
  },
};

async function main(argv: readonly string[]): Promise<number> {
  // Every command answers --version (flags only: anything after `--` is a path).
  const flags = argv.indexOf('--') < 0 ? argv : argv.slice(0, argv.indexOf('--'));
  if (flags.includes('--version')) {
    const { packageVersion } = await import('./config/version.js');
    process.stdout.write(`snapshot-webhook ${packageVersion()}\n`);
    return 0;
  }
  const first = argv[0];
  // Upstream's binary has no subcommand: `snapshot-webhook --tls-cert-file=...` serves, so Deployments keep working.
  if (first === undefined || first.startsWith('-')) {
    if (first === '--help' || first === '-h') return commands.help?.([]) ?? 0;
    return (commands.serve as Command)(argv);
  }
  const command = commands[first];
  if (command === undefined)
    throw new UsageError(`unknown command ${JSON.stringify(first)}; one of ${Object.keys(commands).join(', ')}`);
  return command(argv.slice(1));
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`snapshot-webhook: ${error.message}\n`);
      process.exitCode = 2;
      return;
    }
    // Never 1: to validate and audit, 1 means "something would be denied", and a crash must not read as that.
    process.stderr.write(`snapshot-webhook: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 2;
  },
);
