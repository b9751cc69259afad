import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { isIP } from 'node:net';
import {
  flagBool,
  flagList,
  flagNumber,
  flagString,
  formatHelp,
  parseFlags,
  UsageError,
  type FlagSpec,
} from '../config/flags.js';
import { loadCa, makeCa, makeServingCert, type Issuer } from './make-certs.js';

const FLAGS: readonly FlagSpec[] = [
  { name: 'service', type: 'string', default: 'snapshot-webhook', help: 'name of the webhook Service' },
  { name: 'namespace', type: 'string', default: 'snapshot-webhook', help: 'namespace of the Service' },
  {
    name: 'out',
    type: 'string',
    default: 'manifests/overlays/self-signed/generated',
    help: 'folder for the files (the self-signed overlay reads it)',
  },
  { name: 'secret-name', type: 'string', default: 'snapshot-webhook-tls', help: 'name of the TLS Secret the Deployment mounts' },
  { name: 'ca-days', type: 'int', default: '3650', min: 1, max: 36500, help: 'lifetime of a new CA' },
  { name: 'days', type: 'int', default: '365', min: 1, max: 3650, help: 'lifetime of the serving certificate' },
  { name: 'rotate', type: 'bool', help: 'make a new CA; the old one stays in the bundle until it expires' },
  {
    name: 'ip',
    type: 'list',
    help: 'IP addresses the certificate also names, comma-separated (a webhook registered by url outside a pod)',
  },
  {
    name: 'url',
    type: 'string',
    help: 'https://ADDRESS:PORT the apiserver calls a webhook served outside a pod at: also write client-config-patch.yaml for the outside-a-pod overlay (ADDRESS must be one of --ip)',
  },
  { name: 'help', type: 'bool', help: 'print this help' },
];

/** The origin of `--url`, checked before anything is written: a usage error for one the certificate would not match. */
function outsideOrigin(url: string, ipAddresses: readonly string[]): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url ${JSON.stringify(url)} is not a URL: give https://ADDRESS:PORT`);
  }
  if (parsed.protocol !== 'https:' || (parsed.pathname !== '/' && parsed.pathname !== '')) {
    throw new UsageError(`--url ${JSON.stringify(url)}: give https://ADDRESS:PORT, with no path (/validate is added)`);
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (!ipAddresses.includes(host)) throw new UsageError(`--url ${url}: the certificate must name ${host}: add --ip ${host}`);
  return parsed.origin;
}

/** The outside-a-pod overlay's patch: each webhook of both configurations called at `origin`/validate. */
function clientConfigPatch(origin: string, bundleBase64: string): string {
  const clientConfig = { url: `${origin}/validate`, caBundle: bundleBase64 };
  return stringify([0, 1].map((i) => ({ op: 'replace', path: `/webhooks/${i}/clientConfig`, value: clientConfig })));
}

/** Every certificate in a PEM bundle, in order. */
function splitPem(bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g)?.map((c) => c.trim() + '\n') ?? [];
}

/** The new CA first, then earlier CAs still valid: clients trusting the bundle accept old and new serving certs. */
function caBundle(currentPem: string, previous: readonly string[], now = new Date()): string {
  const current = `${currentPem.trim()}\n`;
  const fingerprint = (pem: string): string => new X509Certificate(pem).fingerprint256;
  const seen = new Set([fingerprint(current)]);
  const kept = previous.filter((pem) => {
    const cert = new X509Certificate(pem);
    const fresh = new Date(cert.validTo) > now && !seen.has(cert.fingerprint256);
    seen.add(cert.fingerprint256);
    return fresh;
  });
  return [current, ...kept].join('');
}

function write(dir: string, name: string, text: string, mode = 0o644): void {
  writeFileSync(join(dir, name), text, { mode });
}

/**
 * `npm run certs -- --service NAME --namespace NS [--out DIR] [--rotate]`: a CA and a serving certificate
 * for the Service's DNS names, a Secret manifest and the caBundle patch for the self-signed overlay.
 * A second run keeps the CA; `--rotate` makes a new one and keeps the old one in the bundle.
 */
export async function runCerts(
  argv: readonly string[],
  print: (text: string) => void = (text) => process.stdout.write(text),
): Promise<number> {
  if (argv.includes('--help')) {
    print(formatHelp('Usage: snapshot-webhook certs [flags]   (from a checkout: npm run certs -- [flags])', FLAGS));
    return 0;
  }
  const flags = parseFlags(FLAGS, argv, {});
  if (flags.positionals.length > 0) throw new UsageError(`unexpected argument ${flags.positionals[0]}`);
  const service = flagString(flags, 'service') as string;
  const namespace = flagString(flags, 'namespace') as string;
  const out = flagString(flags, 'out') as string;
  const ipAddresses = flagList(flags, 'ip');
  const notIp = ipAddresses.find((ip) => isIP(ip) === 0);
  if (notIp !== undefined) throw new UsageError(`--ip ${JSON.stringify(notIp)} is not an IP address`);
  const url = flagString(flags, 'url');
  const origin = url === undefined ? undefined : outsideOrigin(url, ipAddresses);
  mkdirSync(out, { recursive: true });
  const caFile = join(out, 'ca.crt');
  const caKeyFile = join(out, 'ca.key');
  const bundleFile = join(out, 'ca-bundle.crt');
  const previous = existsSync(bundleFile) ? splitPem(readFileSync(bundleFile, 'utf8')) : [];
  let ca: Issuer;
  const reuse = !flagBool(flags, 'rotate') && existsSync(caFile) && existsSync(caKeyFile);
  if (reuse) {
    ca = await loadCa({ certPem: readFileSync(caFile, 'utf8'), keyPem: readFileSync(caKeyFile, 'utf8') });
  } else {
    ca = await makeCa(`${service}.${namespace} webhook CA`, flagNumber(flags, 'ca-days'));
    write(out, 'ca.key', ca.keyPem, 0o600);
    write(out, 'ca.crt', `${ca.certPem.trim()}\n`);
  }
  const dnsNames = [`${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`];
  const serving = await makeServingCert(ca, {
    commonName: dnsNames[0] as string,
    dnsNames,
    ipAddresses,
    days: flagNumber(flags, 'days'),
  });
  const bundle = caBundle(ca.certPem, previous);
  write(out, 'tls.crt', `${serving.certPem.trim()}\n`);
  write(out, 'tls.key', serving.keyPem, 0o600);
  write(out, 'ca-bundle.crt', bundle);
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  const secretName = flagString(flags, 'secret-name') as string;
  write(
    out,
    'secret.yaml',
    stringify({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: { name: secretName, namespace },
      data: { 'tls.crt': b64(serving.certPem), 'tls.key': b64(serving.keyPem), 'ca.crt': b64(bundle) },
    }),
    0o600,
  );
  const patch = ['validation-webhook.snapshot.storage.k8s.io', 'validation-webhook.groupsnapshot.storage.k8s.io'].map((_, i) => ({
    op: 'add',
    path: `/webhooks/${i}/clientConfig/caBundle`,
    value: b64(bundle),
  }));
  write(out, 'ca-bundle-patch.yaml', stringify(patch));
  if (origin !== undefined) write(out, 'client-config-patch.yaml', clientConfigPatch(origin, b64(bundle)));
  const cas = splitPem(bundle).length;
  print(
    `${reuse ? 'kept the CA' : 'made a new CA'}; serving certificate for ${[...dnsNames, ...ipAddresses].join(', ')}; ${cas} CA(s) in the bundle; files in ${out}/\n`,
  );
  return 0;
}
