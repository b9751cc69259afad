import type { ReviewOutcome } from '../admission/review.js';
import type { Logger } from '../log/logger.js';
import { BOUNDS } from '../limits/bounds.js';

/** What is done with each answered review: its decision line, its metrics, its denial event. */
export type RecordDecision = (outcome: ReviewOutcome, durationMs: number) => void;

/**
 * Records answered reviews together, once per turn of the event loop (`setImmediate`: after the turn's answers
 * are written), instead of one at a time between them. A saturated server answers many requests in each turn,
 * and recording them in a row costs less CPU (docs/benchmarks.md, "What the measurements chose"). The line and
 * the metrics are the same; a review's duration ends at its decision (the admission route records it there).
 */
export class DecisionRecords {
  private readonly held: Array<{ readonly outcome: ReviewOutcome; readonly durationMs: number }> = [];
  private immediate: NodeJS.Immediate | undefined;

  constructor(
    private readonly record: RecordDecision,
    private readonly logger: Logger,
  ) {}

  /** Holds one answered review until the end of the turn; at the bound, records all held ones at once. */
  add(outcome: ReviewOutcome, durationMs: number): void {
    this.held.push({ outcome, durationMs });
    if (this.held.length >= BOUNDS.decisionsHeld) this.flush();
    else this.immediate ??= setImmediate(() => this.flush());
  }

  /** Records every held review, in the order they were answered (also at close). */
  flush(): void {
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.immediate = undefined;
    const held = this.held.splice(0);
    for (const { outcome, durationMs } of held) {
      try {
        this.record(outcome, durationMs);
      } catch (error) {
        // Outside the request now, nothing else would catch it: one failed record must not stop the process.
        this.logger.error({ err: error, uid: outcome.request.uid }, 'could not record a decision');
      }
    }
  }
}
