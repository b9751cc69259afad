import type { Server as HttpServer } from 'node:http';
import type { Server as TlsServer, TLSSocket } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { BOUNDS } from '../../limits/bounds.js';
import type { Logger } from '../../log/logger.js';
import { limitConnections } from '../connection-limit.js';
import { watchHandshakeFailures } from '../handshake-failures.js';
import type { WebhookMetrics } from '../metrics.js';

/**
 * The admission listener's serving certificate and key; omitted for plain HTTP on loopback (tests only). With
 * `clientCa`, mutual TLS: a client without a certificate from it is refused at the handshake, and with
 * `allowedClientNames` one whose certificate names none of them is cut right after it.
 */
export interface ListenerTls {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly clientCa?: Buffer;
  readonly allowedClientNames?: readonly string[];
}

export interface ConnectionsOptions {
  readonly tls: ListenerTls | undefined;
  readonly logger: Logger;
  readonly metrics: WebhookMetrics | undefined;
}

/**
 * What the listener does with connections before any request: bounds them (connection-limit.ts), counts failed
 * handshakes, and with mutual TLS refuses unknown clients.
 */
export const connections = fp(
  async (app: FastifyInstance, { tls, logger, metrics }: ConnectionsOptions) => {
    const counts = limitConnections(app.server as unknown as HttpServer, tls !== undefined);
    metrics?.watchConnections(counts);
    if (tls === undefined) return;
    const server = app.server as unknown as TlsServer;
    watchHandshakeFailures(server, logger, (reason) => metrics?.handshakeFailed(reason));
    if (tls.clientCa !== undefined) refuseUnknownClients(server, tls, logger, metrics);
  },
  { name: 'connections', fastify: '5.x' },
);

/** The names a client certificate gives: its CN and its DNS SANs. */
function clientNames(socket: TLSSocket): string[] {
  const cert = socket.getPeerCertificate();
  const cn = cert.subject?.CN;
  const sans = (cert.subjectaltname ?? '')
    .split(', ')
    .filter((n) => n.startsWith('DNS:'))
    .map((n) => n.slice(4));
  return [...(typeof cn === 'string' ? [cn] : []), ...sans];
}

/** With mutual TLS: counts refused handshakes, and cuts a verified client whose names are not allowed. */
function refuseUnknownClients(server: TlsServer, tls: ListenerTls, logger: Logger, metrics: WebhookMetrics | undefined): void {
  server.on('tlsClientError', () => metrics?.clientRefused('handshake'));
  const allowed = new Set(tls.allowedClientNames ?? []);
  if (allowed.size === 0) return;
  server.on('secureConnection', (socket: TLSSocket) => {
    const names = clientNames(socket);
    if (names.some((n) => allowed.has(n))) return;
    metrics?.clientRefused('name');
    logger.debug({ names: names.slice(0, BOUNDS.clientNamesLogged) }, 'refused a client certificate whose names are not allowed');
    socket.destroy();
  });
}
