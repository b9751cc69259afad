import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { WebhookMetrics } from '../metrics.js';

/** One named part of readiness, and what is wrong with it now (nothing when it is ready). */
export interface ReadinessCheck {
  readonly name: string;
  readonly problems: readonly string[];
  /** Shown by `/readyz?verbose` but not counted: the server stays ready with these problems. */
  readonly informational?: boolean;
}

export interface Readiness {
  /** Each check, in a fixed order; the server is ready when none has a problem. */
  checks(): readonly ReadinessCheck[];
}

/** The paths of this plugin, for a listener's 404. */
export const PROBE_PATHS = ['/healthz', '/readyz', '/metrics'] as const;

/** The problems that make the server not ready. */
function readinessProblems(checks: readonly ReadinessCheck[]): string[] {
  return checks.filter((c) => c.informational !== true).flatMap((c) => c.problems);
}

/** `/readyz?verbose`, as the kube-apiserver's own probes write it: a line per check, then the verdict. */
function verboseReadiness(checks: readonly ReadinessCheck[]): string {
  const lines = checks.map((c) => {
    if (c.problems.length === 0) return `[+]${c.name} ok`;
    return `[-]${c.name} failed${c.informational === true ? ' (not counted: still ready)' : ''}: ${c.problems.join('; ')}`;
  });
  const ready = readinessProblems(checks).length === 0;
  return `${lines.join('\n')}\n${ready ? 'readyz check passed' : 'readyz check failed'}\n`;
}

export interface ProbeRoutesOptions {
  readonly readiness: Readiness;
  readonly metrics: WebhookMetrics | undefined;
}

/** GET /healthz, /readyz and /metrics: on the HTTPS port, and on the plain probe port when there is one. */
export const probeRoutes = fp(
  async (app: FastifyInstance, { readiness, metrics }: ProbeRoutesOptions) => {
    if (metrics !== undefined) {
      app.get('/metrics', async (_request, reply) => reply.type(metrics.registry.contentType).send(await metrics.text()));
    }
    app.get('/healthz', async (_request, reply) => reply.type('text/plain').send('ok'));
    app.get('/readyz', async (request, reply) => {
      const checks = readiness.checks();
      const reasons = readinessProblems(checks);
      if (Object.hasOwn(request.query as object, 'verbose'))
        return reply
          .code(reasons.length === 0 ? 200 : 503)
          .type('text/plain')
          .send(verboseReadiness(checks));
      if (reasons.length === 0) return reply.type('text/plain').send('ok');
      return reply
        .code(503)
        .type('text/plain')
        .send(`not ready: ${reasons.join('; ')}`);
    });
  },
  { name: 'probe-routes', fastify: '5.x' },
);
