import type { ReviewOutcome } from '../admission/review.js';
import type { Logger } from './logger.js';
import { redactForLog } from './redact.js';

/** One line per decision: who asked what, the answer, the rule that decided and how long it took. */
export function logDecision(logger: Logger, outcome: ReviewOutcome, durationMs: number): void {
  if (!logger.isLevelEnabled('info')) return;
  const { request, decision, evaluation } = outcome;
  logger.info(
    {
      uid: request.uid,
      kind: evaluation.route?.kind ?? request.kind.kind,
      resource: `${request.resource.resource}.${request.resource.version}.${request.resource.group}`,
      namespace: request.namespace,
      name: request.name,
      operation: request.operation,
      user: request.userInfo?.username,
      dryRun: request.dryRun === true ? true : undefined,
      allowed: decision.allowed,
      rule: decision.denial?.rule,
      reason: decision.denial?.message,
      warnings: decision.warnings.length > 0 ? decision.warnings.length : undefined,
      ms: Math.round(durationMs * 1000) / 1000,
    },
    decision.allowed ? (decision.softened ? 'allowed (would be denied)' : 'allowed') : 'denied',
  );
  if (logger.isLevelEnabled('debug')) {
    logger.debug({ uid: request.uid, request: redactForLog(request), response: outcome.body.response }, 'request and response');
  }
}
