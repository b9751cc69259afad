import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import t from 'tap';
import { BUNDLE_OPTIONS, CLIENT_NODE_DIST } from '../../src/packaging/bundle-options.js';
import { buildExtrasFile, clientNodeExtrasWhenUsed, EXTRAS_FILE } from '../../src/packaging/client-node-extras.js';
import { buildUndiciFile, undiciAsClientNodeUsesIt } from '../../src/packaging/client-node-undici.js';

// client-node's modules that use the packages of exec and attach, cp, SOCKS proxies and the OIDC and GCP auth
// providers, bundled as the server's bundle has them (build-bundle.ts, undici in its own file too): the packages
// in a file of their own, required when one is first used.
const dir = mkdtempSync(join(tmpdir(), 'sw-extras-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/** A string from each package's own code: in the file of extras, and nowhere in the bundle. */
const MARKERS = {
  ws: 'Sec-WebSocket-Version',
  'tar-stream': 'USTAR_MAGIC',
  socks: 'InvalidSocksCommand',
  'openid-client': 'OAUTH_RESPONSE_IS_NOT_CONFORM',
  'jsonpath-plus': 'JSONPath should not be called with "new"',
};

t.test('the packages are read only when client-node first uses them, and then work', async (t) => {
  await build({
    ...BUNDLE_OPTIONS,
    stdin: {
      contents: [
        "export { KubeConfig } from './config.js';",
        "export { Watch } from './watch.js';",
        "export { WebSocketHandler } from './web-socket-handler.js';",
        "export { Cp } from './cp.js';",
        "export { OpenIDConnectAuth } from './oidc_auth.js';",
        "export { GoogleCloudPlatformAuth } from './gcp_auth.js';",
      ].join('\n'),
      resolveDir: CLIENT_NODE_DIST,
      loader: 'js',
    },
    outfile: join(dir, 'kube.js'),
    plugins: [clientNodeExtrasWhenUsed, undiciAsClientNodeUsesIt],
  });
  await buildExtrasFile(dir);
  await buildUndiciFile(dir);
  const bundle = readFileSync(join(dir, 'kube.js'), 'utf8');
  const extras = readFileSync(join(dir, EXTRAS_FILE), 'utf8');
  for (const [name, marker] of Object.entries(MARKERS)) {
    t.ok(extras.includes(marker), `${name}: in ${EXTRAS_FILE}`);
    t.notOk(bundle.includes(marker), `${name}: not in the bundle`);
  }

  // Run in a plain Node process, as the server runs. The file is moved away after the import: what a served
  // cluster uses (a kubeconfig with a token, its HTTPS options, a watch) must work without it.
  const file = join(dir, EXTRAS_FILE);
  const away = join(dir, 'away.cjs');
  const token = { access: 'from-the-command', expiry: '2999-01-01T00:00:00Z' };
  writeFileSync(
    join(dir, 'check.mjs'),
    [
      "import { renameSync } from 'node:fs';",
      "const { KubeConfig, Watch, WebSocketHandler, Cp, OpenIDConnectAuth, GoogleCloudPlatformAuth } = await import('./kube.js');",
      `renameSync(${JSON.stringify(file)}, ${JSON.stringify(away)});`,
      'const config = (proxyUrl) => { const kc = new KubeConfig();',
      "  kc.loadFromOptions({ clusters: [{ name: 'c', server: 'https://127.0.0.1:1', proxyUrl }], users: [{ name: 'u', token: 't' }],",
      "    contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' }); return kc; };",
      'const kc = config(undefined);',
      'const options = {};',
      'await kc.applyToHTTPSOptions(options);',
      'new Watch(kc);',
      'const without = { agent: options.agent?.constructor?.name };',
      `renameSync(${JSON.stringify(away)}, ${JSON.stringify(file)});`,
      // SOCKS: a named import, constructed.
      'const socks = {};',
      "await config('socks5://127.0.0.1:1080').applyToHTTPSOptions(socks);",
      // ws: the default import, constructed; the connection to a closed loopback port is refused.
      "const ws = await new WebSocketHandler(kc).connect('/x', null, null).then(() => 'open', (e) => e.error?.code ?? e.message);",
      // tar-fs: the default import, a function read from it.
      "await new Cp(kc, { exec: async () => undefined }).cpFromPod('ns', 'pod', 'c', '/src', " +
        JSON.stringify(join(dir, 'cp')) +
        ');',
      // jsonpath-plus: a namespace import, read by name, on a token from a command (the GCP provider).
      `const user = { authProvider: { name: 'gcp', config: { 'cmd-path': process.execPath, 'cmd-args': ${JSON.stringify(
        `-e "console.log(JSON.stringify(${JSON.stringify(token).replaceAll('"', "'")}))"`,
      )}, 'token-key': '{.access}', 'expiry-key': '{.expiry}' } } };`,
      'const gcp = { headers: {} };',
      'await new GoogleCloudPlatformAuth().applyAuthentication(user, gcp);',
      // openid-client: a namespace import; discovery at a closed loopback port fails in its fetch, not before.
      "const oidcUser = { authProvider: { name: 'oidc', config: { 'id-token': 'x', 'refresh-token': 'r',",
      "  'idp-issuer-url': 'https://127.0.0.1:1', 'client-id': 'c' } } };",
      'const oidc = await new OpenIDConnectAuth().applyAuthentication(oidcUser, { headers: {} }).then(() => "applied", (e) => e.constructor.name + ": " + e.message);',
      'console.log(JSON.stringify({ without, socks: socks.agent?.constructor?.name, ws, gcp: gcp.headers.Authorization, oidc }));',
    ].join('\n'),
  );
  const run = spawnSync(process.execPath, [join(dir, 'check.mjs')], { encoding: 'utf8', timeout: 30_000 });
  t.equal(run.status, 0, run.stderr);
  const result = JSON.parse(run.stdout) as Record<string, unknown>;
  t.same(
    { ...result, oidc: undefined },
    {
      without: { agent: 'Agent' },
      socks: 'SocksProxyAgent',
      ws: 'ECONNREFUSED',
      gcp: 'Bearer from-the-command',
      oidc: undefined,
    },
  );
  // openid-client's own error: client-node 2.0 passes the issuer as a string, where openid-client 6 asks for a URL
  // (a connection refused, should that change).
  t.match(String(result.oidc), /"server" must be an instance of URL|fetch failed|ECONNREFUSED/, 'openid-client was reached');
});
