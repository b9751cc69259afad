import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadServingPair } from './serving-pair.js';
import { makeCa, makeServingCert } from './make-certs.js';

/** Days a development certificate lives; it is remade when it has less than a week left. */
const DEV_DAYS = 90;
const RENEW_BEFORE_MS = 7 * 86_400_000;

export interface DevCertPaths {
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
}

export function devCertPaths(dir: string): DevCertPaths {
  return { caFile: join(dir, 'ca.crt'), certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') };
}

function stillGood(paths: DevCertPaths): boolean {
  if (!existsSync(paths.caFile)) return false;
  try {
    const pair = loadServingPair(paths.certFile, paths.keyFile, new Date(Date.now() + RENEW_BEFORE_MS));
    return pair.notAfter.getTime() > Date.now();
  } catch {
    return false;
  }
}

/**
 * `npm start`: a development CA and a serving certificate for localhost, 127.0.0.1 and ::1 under certs/dev
 * (ignored by git), made only when missing or about to expire. Returns whether new files were written.
 */
export async function ensureDevCerts(dir: string): Promise<boolean> {
  const paths = devCertPaths(dir);
  if (stillGood(paths)) return false;
  mkdirSync(dir, { recursive: true });
  const ca = await makeCa('snapshot-webhook development CA', DEV_DAYS);
  const serving = await makeServingCert(ca, {
    commonName: 'localhost',
    dnsNames: ['localhost'],
    ipAddresses: ['127.0.0.1', '::1'],
    days: DEV_DAYS,
  });
  writeFileSync(paths.caFile, ca.certPem);
  writeFileSync(paths.certFile, serving.certPem);
  writeFileSync(paths.keyFile, serving.keyPem, { mode: 0o600 });
  return true;
}
