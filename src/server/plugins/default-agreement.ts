import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { DefaultAgreement } from '../../rules/default-claim.js';

/**
 * The replicas' agreement on defaults (cluster mode): on close, after the last request, it waits for the claims
 * still in flight, so the class watches it trusts are not stopped under a Lease write.
 */
export const defaultAgreement = fp(
  async (app: FastifyInstance, { agreement }: { readonly agreement: DefaultAgreement | undefined }) => {
    if (agreement === undefined) return;
    app.addHook('onClose', async () => agreement.drain());
  },
  // After the class source, so that it drains before the watches stop (fastify closes in reverse order).
  { name: 'default-agreement', fastify: '5.x', dependencies: ['class-source'] },
);
