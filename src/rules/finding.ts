import type { ClassKind } from '../classes/class-kinds.js';
/**
 * What a rule reports. A rule returns findings; the admission layer turns the first denying finding into a
 * denial and the rest into warnings. Rule ids are stable: they appear in logs, metrics and `--warn-rules`.
 */
export const RULE_IDS = [
  'source-exactly-one',
  'field-not-empty',
  'field-immutable',
  'ref-name-namespace-set',
  'default-class-unique',
  'class-cache-unavailable',
  'default-claim-unavailable',
  'object-undecodable',
  'default-annotation-near-miss',
  'class-not-found',
  'deprecated-version',
  'existing-double-default',
  'unhandled-resource',
] as const;

export type RuleId = (typeof RULE_IDS)[number];

/** Rules that say the webhook cannot answer: they deny in every mode, because the webhook never guesses. */
export const CANNOT_ANSWER_RULES: ReadonlySet<RuleId> = new Set(['class-cache-unavailable', 'default-claim-unavailable']);

export interface Finding {
  readonly rule: RuleId;
  readonly message: string;
  /** A warning never denies; it is shown to the user in the AdmissionReview `warnings`. */
  readonly warning?: boolean;
  /** HTTP-style code for the denial's status; 400 (what the apiserver used for upstream's denials) by default. */
  readonly code?: number;
  /** The existing class a `default-class-unique` denial names. */
  readonly conflictsWith?: string;
  /** What a warning says of this denial when another one denies, or warn mode lets it through (a short form). */
  readonly warningMessage?: string;
  /** What the log says instead of `message`, when the message echoes values that may be credentials. */
  readonly logMessage?: string;
  /** The class a `class-not-found` warning names (the CLI says so when its own input denied that class). */
  readonly missingClass?: { readonly kind: ClassKind; readonly name: string };
}

export function deny(
  rule: RuleId,
  message: string,
  extra: Pick<Finding, 'code' | 'conflictsWith' | 'logMessage' | 'warningMessage'> = {},
): Finding {
  return { rule, message, ...extra };
}

export function warn(rule: RuleId, message: string, extra: { missingClass?: Finding['missingClass'] } = {}): Finding {
  return { rule, message, warning: true, ...extra };
}
