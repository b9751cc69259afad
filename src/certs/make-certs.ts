import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

/** ECDSA P-256 with SHA-256: small, fast to make, accepted by Go's TLS stack and every browser. */
const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;

export interface PemPair {
  readonly certPem: string;
  readonly keyPem: string;
}

export interface Issuer extends PemPair {
  readonly cert: x509.X509Certificate;
  readonly keys: CryptoKeyPair;
}

async function keyPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

function serial(): string {
  // 16 random bytes with the top bit clear: a positive serial, as RFC 5280 asks.
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] as number) & 0x7f;
  return Buffer.from(bytes).toString('hex');
}

function validity(days: number): { notBefore: Date; notAfter: Date } {
  // Backdated an hour so a node whose clock runs a little behind still accepts it.
  const notBefore = new Date(Date.now() - 3_600_000);
  return { notBefore, notAfter: new Date(notBefore.getTime() + days * DAY_MS) };
}

export async function makeCa(commonName: string, days: number): Promise<Issuer> {
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${commonName}`,
    ...validity(days),
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert, keys, certPem: cert.toString('pem'), keyPem: await keyPem(keys.privateKey) };
}

/** Rebuilds an issuer from PEM files written earlier, so a second run keeps the CA. */
export async function loadCa(pair: PemPair): Promise<Issuer> {
  const cert = new x509.X509Certificate(pair.certPem);
  const der = x509.PemConverter.decodeFirst(pair.keyPem);
  const privateKey = await webcrypto.subtle.importKey('pkcs8', der, ALGORITHM, true, ['sign']);
  const publicKey = await cert.publicKey.export(ALGORITHM, ['verify']);
  return { ...pair, cert, keys: { privateKey, publicKey } };
}

export interface ServingRequest {
  readonly commonName: string;
  readonly dnsNames: readonly string[];
  readonly ipAddresses?: readonly string[];
  readonly days: number;
}

/** A serving certificate for server auth only, its SANs the names clients dial. */
export async function makeServingCert(ca: Issuer, request: ServingRequest): Promise<PemPair> {
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const names = [
    ...request.dnsNames.map((value) => ({ type: 'dns' as const, value })),
    ...(request.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${request.commonName}`,
    issuer: ca.cert.subject,
    ...validity(request.days),
    publicKey: keys.publicKey,
    signingKey: ca.keys.privateKey,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(names),
      await x509.AuthorityKeyIdentifierExtension.create(ca.cert),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await keyPem(keys.privateKey) };
}
