import type { ReviewOutcome } from '../admission/review.js';
import type { Logger } from '../log/logger.js';
import { redactForLog } from '../log/redact.js';
import { shown } from '../rules/values.js';

function message(outcome: ReviewOutcome): string {
  const { decision } = outcome;
  if (!decision.allowed) return 'denied';
  return decision.softened ? 'allowed (would be denied)' : 'allowed';
}

/** The response with every message that echoes possible credentials (a finding's logMessage) replaced. */
function responseForLog(outcome: ReviewOutcome): unknown {
  const swaps = outcome.evaluation.findings.filter((f) => f.logMessage !== undefined);
  if (swaps.length === 0) return outcome.body.response;
  const inJson = (text: string): string => JSON.stringify(text).slice(1, -1);
  let text = JSON.stringify(outcome.body.response);
  for (const f of swaps) text = text.split(inJson(f.message)).join(inJson(f.logMessage as string));
  return JSON.parse(text) as unknown;
}

/**
 * One line per decision: who asked what, the answer, the rule that decided and how long it took (pino leaves
 * out the fields that are undefined). At debug, also the request (secrets redacted) and the response.
 */
export function logDecision(logger: Logger, outcome: ReviewOutcome, durationMs: number): void {
  if (!logger.isLevelEnabled('info')) return;
  const { request, decision, evaluation } = outcome;
  const { resource, version, group } = request.resource;
  logger.info(
    {
      uid: request.uid,
      kind: evaluation.route?.kind ?? shown(request.kind.kind),
      resource: shown(`${resource}.${version}.${group}`),
      namespace: request.namespace === undefined ? undefined : shown(request.namespace),
      name: request.name === undefined ? undefined : shown(request.name),
      operation: shown(request.operation),
      user: request.userInfo?.username === undefined ? undefined : shown(request.userInfo.username),
      dryRun: request.dryRun === true ? true : undefined,
      allowed: decision.allowed,
      rule: decision.denial?.rule,
      reason: decision.denial?.logMessage ?? decision.denial?.message,
      warnings: decision.warnings.length > 0 ? decision.warnings.length : undefined,
      ms: Math.round(durationMs * 1000) / 1000,
    },
    message(outcome),
  );
  if (logger.isLevelEnabled('debug')) {
    logger.debug(
      { uid: request.uid, request: redactForLog(request), response: redactForLog(responseForLog(outcome)) },
      'request and response',
    );
  }
}
