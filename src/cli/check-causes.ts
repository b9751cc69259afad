import type { WriteAnswer } from '../cluster/live-check-api.js';

/**
 * Why a probe of the default-class rule did not come back denied: the apiserver's answer to a dry-run second
 * default read as one cause, with the line `snapshot-webhook check` prints for it. Pure: the command and its tests
 * hand it the words the apiserver wrote. The phrases matched are the apiserver's own, from its webhook client
 * (k8s.io/apiserver/pkg/admission/plugin/webhook: "failed calling webhook", "admission webhook ... denied the
 * request") and Go's net and crypto/x509 errors, which 1.20 and 1.36 word alike.
 */
export type CauseId =
  | 'apiserver'
  | 'crds'
  | 'registration'
  | 'ca-bundle'
  | 'no-endpoint'
  | 'refused'
  | 'timeout'
  | 'webhook-error'
  | 'not-denied'
  | 'cel'
  | 'conversion'
  | 'cleanup';

export interface Cause {
  readonly cause: CauseId;
  readonly message: string;
}

/**
 * The default-class rule's denials: another default exists (the webhook, upstream's webhook and the policy word it
 * alike), or one was just admitted or claimed by a replica (src/rules/default-claim.ts). Each proves the rule live.
 */
export const DENIAL = /default snapshot class: .+ (already exists|was just admitted|was claimed) for driver: /;

/** The name of the webhook the apiserver failed to call, from its message. */
function webhookName(message: string): string {
  return /failed calling webhook "([^"]+)"/.exec(message)?.[1] ?? 'the webhook';
}

/** A webhook call that failed, by the words of Go's error. */
function callFailure(message: string): Cause {
  const hook = webhookName(message);
  const target = /Post "([^"?]+)/.exec(message)?.[1];
  const at = target === undefined ? '' : ` at ${target}`;
  if (/x509:|tls: |certificate/.test(message))
    return {
      cause: 'ca-bundle',
      message: `the caBundle of ${hook} does not verify the serving certificate${at}: ${message}`,
    };
  if (/no endpoints available|service "[^"]+" not found|no such host|lookup \S+|no route to host/.test(message))
    return { cause: 'no-endpoint', message: `no ready endpoint for ${hook}${at}: ${message}` };
  if (/connection refused|connection reset/.test(message))
    return { cause: 'refused', message: `${hook} refuses connections${at}: ${message}` };
  if (/deadline exceeded|Timeout|timed out|i\/o timeout/.test(message))
    return { cause: 'timeout', message: `${hook} did not answer within its timeoutSeconds${at}: ${message}` };
  return { cause: 'webhook-error', message: `the apiserver could not call ${hook}: ${message}` };
}

/**
 * The cause of a probe's answer, or undefined when the answer proves the rule live (a denial with the rule's
 * message). `registered` says whether any webhook or policy is registered for class writes.
 */
export function probeCause(answer: WriteAnswer, registered: boolean): Cause | undefined {
  if (answer.admitted)
    return registered
      ? {
          cause: 'not-denied',
          message:
            'a second default class was admitted (dry run): a registration matches class writes but nothing denied it; ' +
            'with failurePolicy Ignore (first-install) a webhook that is down lets it through',
        }
      : {
          cause: 'registration',
          message:
            'no ValidatingWebhookConfiguration or ValidatingAdmissionPolicy binding is registered for VolumeSnapshotClass ' +
            'writes (validation-webhook.snapshot.storage.k8s.io is missing): apply the manifests (docs/install.md)',
        };
  const { message } = answer;
  if (DENIAL.test(message)) return undefined;
  if (message.includes('failed calling webhook')) return callFailure(message);
  if (message.includes('conversion webhook'))
    return { cause: 'conversion', message: `the apiserver could not convert a class: ${message}` };
  return {
    cause: 'webhook-error',
    message: `a second default class was refused, but not by the default-class rule: ${message}`,
  };
}
