import type { Server as TlsServer } from 'node:tls';
import type { Logger } from '../log/logger.js';
import { BOUNDS } from '../limits/bounds.js';

/**
 * Why a TLS handshake failed, from the OpenSSL error code Node reports: a fixed set, so a client cannot add
 * label values. `certificate-rejected` is the client refusing our serving certificate: the caBundle of the
 * webhook configuration (or of the CRD's conversion stanza) is not the CA of this certificate, or the name or
 * the dates are wrong.
 */
export const HANDSHAKE_FAILURES = ['certificate-rejected', 'client-certificate', 'not-tls', 'aborted', 'other'] as const;
export type HandshakeFailure = (typeof HANDSHAKE_FAILURES)[number];

const REJECTED = /ALERT_(UNKNOWN_CA|BAD_CERTIFICATE|CERTIFICATE_UNKNOWN|CERTIFICATE_EXPIRED|DECRYPT_ERROR)/;
const CLIENT_CERTIFICATE = /PEER_DID_NOT_RETURN_A_CERTIFICATE|CERTIFICATE_VERIFY_FAILED|NO_CERTIFICATE/;

export function handshakeFailure(code: string | undefined): HandshakeFailure {
  if (code === undefined) return 'other';
  if (REJECTED.test(code)) return 'certificate-rejected';
  if (CLIENT_CERTIFICATE.test(code)) return 'client-certificate';
  if (/HTTP_REQUEST|WRONG_VERSION_NUMBER|UNKNOWN_PROTOCOL/.test(code)) return 'not-tls';
  if (code === 'ECONNRESET' || code === 'ERR_TLS_HANDSHAKE_TIMEOUT' || code === 'EPIPE') return 'aborted';
  return 'other';
}

/** What the log line says for each reason: what to check. */
const ADVICE: Readonly<Record<HandshakeFailure, string>> = {
  'certificate-rejected':
    "TLS handshakes failing: the client rejects the serving certificate; check that the caBundle of the webhook configuration (and of the CRD's conversion stanza) is this certificate's CA, and its name and dates (docs/troubleshooting.md)",
  'client-certificate': 'TLS handshakes failing: a client without a certificate from --client-ca-file (mutual TLS)',
  'not-tls': 'TLS handshakes failing: a client speaks plain HTTP (or no TLS) to the HTTPS port',
  aborted: 'TLS handshakes failing: clients closed the connection or timed out during the handshake',
  other: 'TLS handshakes failing',
};

/**
 * Counts every failed handshake by reason (`count`), and logs at most one warning per reason every
 * `BOUNDS.handshakeLogSeconds`, with how many failed since the last line: a flood of bad handshakes is one line a
 * minute, and the first one shows at once.
 */
export function watchHandshakeFailures(
  server: TlsServer,
  logger: Logger,
  count: (reason: HandshakeFailure) => void,
  now: () => number = Date.now,
): void {
  const lastLine = new Map<HandshakeFailure, number>();
  const since = new Map<HandshakeFailure, number>();
  server.on('tlsClientError', (error: NodeJS.ErrnoException, socket) => {
    const reason = handshakeFailure(error.code);
    count(reason);
    since.set(reason, (since.get(reason) ?? 0) + 1);
    const last = lastLine.get(reason);
    if (last !== undefined && now() - last < BOUNDS.handshakeLogSeconds * 1000) return;
    lastLine.set(reason, now());
    logger.warn({ reason, code: error.code, remote: socket.remoteAddress, failures: since.get(reason) }, ADVICE[reason]);
    since.set(reason, 0);
  });
}
