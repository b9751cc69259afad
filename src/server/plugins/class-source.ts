import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { ClassSource } from '../../classes/class-source.js';

/** Starts the class source (manifests or a cluster's watches) and stops it on close; none in process (tests). */
export const classSource = fp(
  async (app: FastifyInstance, { source }: { readonly source: ClassSource | undefined }) => {
    if (source === undefined) return;
    // Registered before the first await: a start that fails half way still stops what it opened.
    app.addHook('onClose', async () => source.stop());
    await source.start();
  },
  { name: 'class-source', fastify: '5.x' },
);
