import type { Server as TlsServer } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { MIN_TLS_VERSION } from '../../certs/serving-pair.js';
import type { ServingCertificate } from '../serving-certificate.js';

export interface CertificateReloadOptions {
  /** Undefined in process (tests): nothing to watch. */
  readonly certificate: ServingCertificate | undefined;
  /** The client CA of mutual TLS, kept in every new context. */
  readonly clientCa: Buffer | undefined;
}

/** Watches the certificate folder and swaps each new valid pair into the listener; stops watching on close. */
export const certificateReload = fp(
  async (app: FastifyInstance, { certificate, clientCa }: CertificateReloadOptions) => {
    if (certificate === undefined) return;
    const listener = app.server as unknown as TlsServer;
    certificate.start((pair) =>
      listener.setSecureContext({
        cert: pair.cert,
        key: pair.key,
        minVersion: MIN_TLS_VERSION,
        ...(clientCa === undefined ? {} : { ca: clientCa }),
      }),
    );
    app.addHook('onClose', async () => certificate.stop());
  },
  { name: 'certificate-reload', fastify: '5.x' },
);
