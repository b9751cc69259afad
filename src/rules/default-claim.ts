import { CLAIM_WINDOW_MS } from '../classes/default-claims.js';
import { CLASS_KIND_FACTS, secondDefaultMessage, type ClassKind } from '../classes/class-kinds.js';
import type { SnapshotClass } from '../schemas/types.js';
import { deny, type Finding } from './finding.js';
import { shown } from './values.js';

/** A class write the rules allow: the caller's class view can count it before anyone else reports it. */
export interface AdmittedClass {
  readonly kind: ClassKind;
  readonly object: SnapshotClass;
  /** True when this write makes the class a default for its driver that it was not before. */
  readonly becomesDefault: boolean;
}

/** What the replicas' record of defaults says about a class that wants to become its driver's default. */
export type ClaimAnswer =
  /** The claim is recorded (or, in a dry run, would be). */
  | { readonly outcome: 'recorded' }
  /**
   * Another class holds the driver's default: which, since when (the apiserver's clock), whether this replica's cache
   * has seen that class at all, and who wrote the record last.
   */
  | {
      readonly outcome: 'held';
      readonly by: string;
      readonly since: number;
      readonly now: number;
      readonly appeared: boolean;
      readonly replica?: string;
    }
  /** The record cannot be read or written now. */
  | { readonly outcome: 'unavailable'; readonly reason: string };

/** Agreement with the other replicas that a class becomes its driver's default (cluster mode only). */
export interface DefaultAgreement {
  /** Claims the driver's default for the write; a dry run reads and never writes. */
  claim(write: AdmittedClass, dryRun: boolean): Promise<ClaimAnswer>;
  /**
   * Resolves once no claim is in flight and the record no longer names this replica as its writer. A claim can
   * outlive its request (the apiserver gives up at its timeout while the Lease write is still out, for at most
   * the claim budget); shutdown waits for it.
   */
  drain(): Promise<void>;
}

/**
 * The default-class rule's word on a claim (docs/rules.md, "Agreement across replicas"): a held default denies
 * with the same first words as the cache's denial; a record that cannot be reached is a 503 to retry.
 */
export function claimFinding({ kind, object }: AdmittedClass, answer: ClaimAnswer): Finding | undefined {
  const driver = shown(object.driver ?? '');
  if (answer.outcome === 'recorded') return undefined;
  if (answer.outcome === 'unavailable') {
    return deny(
      'default-claim-unavailable',
      `cannot record ${shown(object.metadata.name ?? '')} as the default ${kind} for driver ` +
        `${driver} across the webhook's replicas: ${answer.reason}; retry shortly`,
      { code: 503 },
    );
  }
  const prefix = `${CLASS_KIND_FACTS[kind].denialPrefix}: ${shown(answer.by)}`;
  if (answer.now - answer.since >= CLAIM_WINDOW_MS) {
    const { message, short } = secondDefaultMessage(kind, shown(answer.by), driver);
    return deny('default-class-unique', message, { conflictsWith: answer.by, warningMessage: short });
  }
  const wait = Math.max(1, Math.ceil((answer.since + CLAIM_WINDOW_MS - answer.now) / 1000));
  // Admitted by a replica, but not seen here yet: it may still be on its way, or have been refused after the claim.
  const what = answer.appeared
    ? `was just admitted for driver: ${driver}`
    : `was claimed for driver: ${driver} ${Math.max(0, Math.round((answer.now - answer.since) / 1000))} s ago and has not appeared yet`;
  return deny(
    'default-class-unique',
    `${prefix} ${what}; make only one class the default (if ${shown(answer.by)} is not created after all, retry in ${wait} s)`,
    { conflictsWith: answer.by },
  );
}
