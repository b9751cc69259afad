import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** Once shutdown began (`closing()`), every answer carries `Connection: close`, so clients stop reusing connections. */
export const closingConnections = fp(
  async (app: FastifyInstance, { closing }: { readonly closing: (() => boolean) | undefined }) => {
    if (closing === undefined) return;
    app.addHook('onSend', (_request, reply, payload, done) => {
      if (closing()) reply.header('connection', 'close');
      done(null, payload);
    });
  },
  { name: 'closing-connections', fastify: '5.x' },
);
