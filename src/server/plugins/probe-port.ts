import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export interface ProbePortOptions {
  /** The plain-HTTP probe server (app.ts buildProbeApp) and where it listens, or undefined without a probe port. */
  readonly probes: { readonly app: FastifyInstance; readonly port: number; readonly host: string } | undefined;
}

/** The plain probe port listens with the server and closes with it. */
export const probePort = fp(
  async (app: FastifyInstance, { probes }: ProbePortOptions) => {
    if (probes === undefined) return;
    app.addHook('onClose', async () => probes.app.close());
    await probes.app.listen({ port: probes.port, host: probes.host });
  },
  // Last: it listens once everything else is up, and is the first to close.
  { name: 'probe-port', fastify: '5.x', dependencies: ['admission-routes'] },
);
