import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** TLS 1.2 is the floor the issue sets and what the kube-apiserver negotiates at least. */
export const MIN_TLS_VERSION = 'TLSv1.2';

export interface ServingPair {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly serial: string;
  readonly subject: string;
  readonly notAfter: Date;
}

/**
 * Reads and checks a serving certificate and key: both readable, the key belongs to the first certificate,
 * and the certificate is valid now. Throws an Error that says which of these failed.
 */
export function loadServingPair(certFile: string, keyFile: string, now = new Date()): ServingPair {
  let cert: Buffer;
  let key: Buffer;
  try {
    cert = readFileSync(certFile);
    key = readFileSync(keyFile);
  } catch (error) {
    throw new Error(`cannot read the serving certificate or key: ${(error as Error).message}`, { cause: error });
  }
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (error) {
    throw new Error(`${certFile} is not a PEM certificate: ${(error as Error).message}`, { cause: error });
  }
  let matches: boolean;
  try {
    matches = x509.checkPrivateKey(createPrivateKey(key));
  } catch (error) {
    throw new Error(`${keyFile} is not a PEM private key: ${(error as Error).message}`, { cause: error });
  }
  if (!matches) throw new Error(`the key in ${keyFile} does not belong to the certificate in ${certFile}`);
  const notAfter = new Date(x509.validTo);
  const notBefore = new Date(x509.validFrom);
  if (notAfter <= now) throw new Error(`the certificate in ${certFile} expired at ${notAfter.toISOString()}`);
  if (notBefore > now) throw new Error(`the certificate in ${certFile} is not valid before ${notBefore.toISOString()}`);
  return { cert, key, serial: x509.serialNumber, subject: x509.subject, notAfter };
}
