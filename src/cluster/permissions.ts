import type { KubeConfig } from '@kubernetes/client-node';
import { CLASS_KIND_FACTS, CLASS_KINDS } from '../classes/class-kinds.js';
import type { Logger } from '../log/logger.js';
import { kubeRequest } from './kube-http.js';

/** One permission the webhook needs, and what goes wrong without it. */
export interface Permission {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  /** Namespaced permissions: the webhook's namespace. */
  readonly namespace?: string;
  /** A permission on one object (RBAC `resourceNames`). */
  readonly name?: string;
  readonly without: string;
}

/**
 * What manifests/base/rbac.yaml grants, as SelfSubjectAccessReviews can ask it: list and watch of both class
 * kinds (the default-class rule), the claim Leases (agreement across replicas), and Events (denied UPDATEs).
 */
export function requiredPermissions(namespace: string): Permission[] {
  const classes = CLASS_KINDS.flatMap((kind) => {
    const { group, resource } = CLASS_KIND_FACTS[kind];
    const without = `default-class writes of ${kind} are answered 503`;
    return ['list', 'watch'].map((verb) => ({ verb, group, resource, without }));
  });
  const leases = (verb: string, name?: string): Permission => ({
    verb,
    group: 'coordination.k8s.io',
    resource: 'leases',
    namespace,
    ...(name === undefined ? {} : { name }),
    without: 'new default classes are answered 503 (the claim cannot be recorded)',
  });
  const claims = CLASS_KINDS.flatMap((kind) => ['get', 'update'].map((verb) => leases(verb, CLASS_KIND_FACTS[kind].claimLease)));
  const events = { verb: 'create', group: '', resource: 'events', without: 'denied UPDATEs leave no Event' };
  return [...classes, leases('create'), ...claims, events];
}

/** `update leases/snapshot-webhook-default-volumesnapshotclass in snapshot-webhook`. */
export function describePermission(p: Permission): string {
  const what = `${p.resource}${p.group === '' ? '' : `.${p.group}`}${p.name === undefined ? '' : `/${p.name}`}`;
  return `${p.verb} ${what}${p.namespace === undefined ? '' : ` in ${p.namespace}`}`;
}

/** Asks the apiserver whether this identity may do it (a SelfSubjectAccessReview: every user may ask). */
export type AccessQuestion = (p: Permission) => Promise<boolean>;

export function selfSubjectAccess(kc: KubeConfig): AccessQuestion {
  return async (p) => {
    const review = await kubeRequest<{ status?: { allowed?: boolean } }>(
      kc,
      'POST',
      '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
      {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: {
          resourceAttributes: {
            verb: p.verb,
            group: p.group,
            resource: p.resource,
            ...(p.namespace === undefined ? {} : { namespace: p.namespace }),
            ...(p.name === undefined ? {} : { name: p.name }),
          },
        },
      },
    );
    return review.status?.allowed === true;
  };
}

/** How often the permissions are asked again: a change of RBAC shows within this (about 1 review a second). */
export const PERMISSION_CHECK_MS = 10_000;

/**
 * Asks for every needed permission at start and every PERMISSION_CHECK_MS: each one found missing is an error
 * line naming the verb and resource (once, until it is granted again, which is an info line), a metric, and an
 * informational readiness check. A review that fails (apiserver away) leaves the last answer as it was.
 */
export class PermissionCheck {
  private readonly denied = new Set<Permission>();
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | undefined;

  constructor(
    private readonly ask: AccessQuestion,
    private readonly logger: Logger,
    readonly permissions: readonly Permission[],
    private readonly everyMs = PERMISSION_CHECK_MS,
  ) {}

  start(): void {
    this.round = this.check();
    this.timer = setInterval(() => {
      this.round = this.check();
    }, this.everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.round;
  }

  /** Whether each needed permission is missing, by the last answers. */
  missing(): readonly Permission[] {
    return this.permissions.filter((p) => this.denied.has(p));
  }

  /** The readiness check's problems: each missing permission and what it breaks. */
  problems(): string[] {
    return this.missing().map((p) => `cannot ${describePermission(p)}: ${p.without}`);
  }

  async check(): Promise<void> {
    await Promise.all(this.permissions.map((p) => this.checkOne(p)));
  }

  private async checkOne(p: Permission): Promise<void> {
    let allowed: boolean;
    try {
      allowed = await this.ask(p);
    } catch (error) {
      this.logger.debug({ err: error, permission: describePermission(p) }, 'cannot ask for a permission now');
      return;
    }
    const fields = { verb: p.verb, resource: p.resource, group: p.group, namespace: p.namespace, name: p.name };
    if (!allowed && !this.denied.has(p)) {
      this.denied.add(p);
      this.logger.error(
        fields,
        `missing permission: cannot ${describePermission(p)}: ${p.without}; see manifests/base/rbac.yaml`,
      );
    } else if (allowed && this.denied.delete(p)) {
      this.logger.info(fields, `permission granted again: ${describePermission(p)}`);
    }
  }
}
