import { readFileSync } from 'node:fs';
import { ClassIndex } from '../classes/class-index.js';
import { loadStaticClasses } from '../classes/static-classes.js';
import { reviewAdmission, type ReviewOutcome } from '../admission/review.js';
import { parseFlags, flagString, formatHelp, UsageError, type FlagSpec } from '../config/flags.js';

const REVIEW_FLAGS: readonly FlagSpec[] = [
  { name: 'classes-from', type: 'string', help: 'file or folder of class manifests standing for the cluster' },
  { name: 'prevent-volume-mode-conversion', type: 'bool', default: 'true', help: 'as for serve' },
  { name: 'help', type: 'bool', help: 'print this help' },
];

const PASS_CLASSES = "pass the cluster's classes, e.g. kubectl get volumesnapshotclasses -o yaml > classes.yaml";

/**
 * Without --classes-from the review sees a cluster with no classes, and says what that left out, where it
 * matters: for a class, the default-class rule; for an object naming a class, that class "does not exist".
 */
export const NO_CLASSES_WARNINGS = {
  classes: `snapshot-webhook: warning: no --classes-from: the default-class rule was not checked (a second default would be allowed); ${PASS_CLASSES}`,
  named: `snapshot-webhook: warning: no --classes-from: every class the object names "does not exist"; ${PASS_CLASSES}`,
} as const;

/** The warning for a review without --classes-from, or undefined when no rule it decided reads the classes. */
function noClassesWarning(outcome: ReviewOutcome): string | undefined {
  if (outcome.evaluation.route?.classKind !== undefined) return NO_CLASSES_WARNINGS.classes;
  if (outcome.evaluation.findings.some((f) => f.rule === 'class-not-found')) return NO_CLASSES_WARNINGS.named;
  return undefined;
}

/**
 * `snapshot-webhook review FILE`: the answer the server would give to an AdmissionReview (for example one
 * from an apiserver audit log), to debug a denial. `-` reads standard input.
 */
export async function runReview(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help')) {
    process.stdout.write(formatHelp('Usage: snapshot-webhook review [flags] FILE', REVIEW_FLAGS));
    return 0;
  }
  const flags = parseFlags(REVIEW_FLAGS, argv, {});
  const file = flags.positionals[0];
  if (file === undefined || flags.positionals.length > 1) throw new UsageError('review takes exactly one FILE (or - for stdin)');
  let body: unknown;
  try {
    body = JSON.parse(readFileSync(file === '-' ? 0 : file, 'utf8'));
  } catch (error) {
    throw new UsageError(`cannot read an AdmissionReview from ${file}: ${(error as Error).message}`);
  }
  const classesFrom = flagString(flags, 'classes-from');
  const index = classesFrom === undefined ? ClassIndex.withNoClasses() : loadStaticClasses(classesFrom);
  try {
    const outcome = await reviewAdmission(body, {
      classes: index,
      options: { preventVolumeModeConversion: flags.values.get('prevent-volume-mode-conversion') === true },
      modes: { mode: 'enforce', warnRules: new Set() },
    });
    const warning = classesFrom === undefined ? noClassesWarning(outcome) : undefined;
    if (warning !== undefined) process.stderr.write(`${warning}\n`);
    process.stdout.write(`${JSON.stringify(outcome.body, null, 2)}\n`);
    return outcome.decision.allowed ? 0 : 1;
  } catch (error) {
    throw new UsageError(`${file}: ${(error as Error).message}`);
  }
}
