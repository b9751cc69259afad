import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { DenialEvents } from '../../cluster/denial-events.js';

/** Denial events go out after the server stopped taking requests: the pending ones are sent on close. */
export const denialEvents = fp(
  async (app: FastifyInstance, { events }: { readonly events: DenialEvents | undefined }) => {
    if (events === undefined) return;
    app.addHook('onClose', async () => events.drain());
  },
  // After the class source, whose cluster connections the events are sent over: they drain before it stops.
  { name: 'denial-events', fastify: '5.x', dependencies: ['class-source'] },
);
