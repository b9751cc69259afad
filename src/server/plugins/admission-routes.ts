import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { reviewAdmission, type ReviewOutcome } from '../../admission/review.js';
import type { Logger } from '../../log/logger.js';
import type { ReviewSettings } from '../../rules/decide-request.js';
import { logDecision } from '../decision-log.js';
import { DecisionRecords } from '../decision-records.js';
import { EmptyBodyError } from '../http-errors.js';
import type { WebhookMetrics } from '../metrics.js';
import { TurnAnswers } from '../turn-answers.js';

/** Admission paths: ours, and upstream's two so existing webhook configurations keep working. */
export const ADMISSION_PATHS = ['/validate', '/volumesnapshot', '/volumegroupsnapshot'] as const;

export interface AdmissionRouteOptions {
  readonly review: ReviewSettings;
  readonly logger: Logger;
  readonly metrics?: WebhookMetrics;
  /** Called after every answered admission request (events). */
  readonly onDecision?: (outcome: ReviewOutcome, durationMs: number) => void;
}

/**
 * POST /validate (and upstream's paths): the body, read as JSON by the json-body plugin, is reviewed; at the end of the event loop's turn the turn's answers are written (turn-answers.ts),
 * and then their decisions are logged and counted (decision-records.ts). A review's duration ends at its
 * decision. The apiserver appends `?timeout=5s`; fastify routes without the query.
 */
export const admissionRoutes = fp(
  async (app: FastifyInstance, options: AdmissionRouteOptions) => {
    const { review, logger, metrics, onDecision } = options;
    const answers = new TurnAnswers();
    const records = new DecisionRecords((outcome, durationMs) => {
      logDecision(logger, outcome, durationMs);
      metrics?.observe(outcome, durationMs);
      onDecision?.(outcome, durationMs);
    }, logger);
    app.addHook('onClose', async () => records.flush());
    for (const url of ADMISSION_PATHS) {
      app.post(url, {
        // In flight from the headers to the answer, or to the client going away: 'close' comes once either way.
        onRequest: (_request, reply, done) => {
          if (metrics !== undefined) {
            metrics.inFlight.inc();
            reply.raw.once('close', () => metrics.inFlight.dec());
          }
          done();
        },
        handler: async (request) => {
          if (request.body === undefined) throw new EmptyBodyError();
          const outcome = await reviewAdmission(request.body, review);
          const turnEnd = answers.end();
          records.add(outcome, performance.now() - request.bodyReceivedAt);
          await turnEnd;
          return outcome.body;
        },
      });
    }
  },
  // After the parts its decisions use, so that on close its last records are flushed before claims and events drain.
  {
    name: 'admission-routes',
    fastify: '5.x',
    dependencies: ['json-body', 'class-source', 'default-agreement', 'denial-events'],
  },
);
