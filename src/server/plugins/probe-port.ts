import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export interface ProbePortOptions {
  /** The plain-HTTP probe server (app.ts buildProbeApp), or undefined when there is no probe port. */
  readonly probes: FastifyInstance | undefined;
  readonly port: number;
  readonly host: string;
}

/** The plain probe port listens with the server and closes with it. */
export const probePort = fp(
  async (app: FastifyInstance, { probes, port, host }: ProbePortOptions) => {
    if (probes === undefined) return;
    app.addHook('onClose', async () => probes.close());
    await probes.listen({ port, host });
  },
  // Last: it listens once everything else is up, and is the first to close.
  { name: 'probe-port', fastify: '5.x', dependencies: ['admission-routes'] },
);
