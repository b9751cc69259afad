import { CANNOT_ANSWER_RULES, type Finding, type RuleId } from './finding.js';

/** Rollout mode: `enforce` denies, `warn` lets the request through and shows the denial as a warning. */
export type Mode = 'enforce' | 'warn';

export interface ModeSettings {
  readonly mode: Mode;
  /** Rules that only warn even when the mode is `enforce`. */
  readonly warnRules: ReadonlySet<RuleId>;
}

export const ENFORCE_ALL: ModeSettings = { mode: 'enforce', warnRules: new Set() };

export interface Decision {
  readonly allowed: boolean;
  /** The finding that denied the request (allowed false), or would have (allowed true in warn mode). */
  readonly denial: Finding | undefined;
  readonly warnings: readonly string[];
  /** True when warn mode turned a denial into an allowed answer. */
  readonly softened: boolean;
  /** Every finding the decision weighed: the rules' and the late check's. */
  readonly findings: readonly Finding[];
}

/**
 * The first finding that denies decides; every other finding is shown as a warning (a later denial as
 * "also: ...", a denial softened by warn mode as "would be denied: ..."). A webhook that cannot answer (cache,
 * claim) denies even in warn mode: the webhook never guesses. `late` is asked only when the findings allow the
 * request: the cross-replica claim of a new default, which must not be recorded for a write that is denied.
 */
export async function decide(
  findings: readonly Finding[],
  settings: ModeSettings = ENFORCE_ALL,
  late?: () => Promise<Finding | undefined>,
): Promise<Decision> {
  const isSoft = (f: Finding): boolean =>
    !CANNOT_ANSWER_RULES.has(f.rule) && (settings.mode === 'warn' || settings.warnRules.has(f.rule));
  const denies = (f: Finding): boolean => f.warning !== true && !isSoft(f);
  const extra = late !== undefined && !findings.some(denies) ? await late() : undefined;
  const all = extra === undefined ? findings : [...findings, extra];
  const denial = all.find(denies);
  const softened = all.find((f) => f.warning !== true && isSoft(f));
  const warnings = all
    .filter((f) => f !== denial)
    .map((f) => (f.warning === true ? f.message : `${isSoft(f) ? 'would be denied' : 'also'}: ${f.warningMessage ?? f.message}`));
  if (denial !== undefined) return { allowed: false, denial, warnings, softened: false, findings: all };
  return { allowed: true, denial: softened, warnings, softened: softened !== undefined, findings: all };
}
