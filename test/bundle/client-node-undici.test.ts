import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import t from 'tap';
import { BUNDLE_OPTIONS, CLIENT_NODE_DIST } from '../../src/packaging/bundle-options.js';
import { buildUndiciFile, undiciAsClientNodeUsesIt, UNDICI_FILE } from '../../src/packaging/client-node-undici.js';

// client-node's KubeConfig and Watch bundled as the server's bundle has them (build-bundle.ts): undici's fetch,
// Agent and ProxyAgent in a file of their own, required when one is first used.
const dir = mkdtempSync(join(tmpdir(), 'sw-undici-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('undici is read only when client-node first uses it, and then works', async (t) => {
  await build({
    ...BUNDLE_OPTIONS,
    stdin: {
      contents: "export { KubeConfig } from './config.js'; export { Watch } from './watch.js';",
      resolveDir: CLIENT_NODE_DIST,
      loader: 'js',
    },
    outfile: join(dir, 'kube.js'),
    plugins: [undiciAsClientNodeUsesIt],
  });
  await buildUndiciFile(dir);
  t.notMatch(readFileSync(join(dir, 'kube.js'), 'utf8'), /UND_ERR_CONNECT_TIMEOUT/, 'no undici code in the bundle');

  // Run in a plain Node process, as the server runs. The undici file is moved away after the import: what
  // does not use undici must work without it.
  const file = join(dir, UNDICI_FILE);
  const away = join(dir, 'away.cjs');
  writeFileSync(
    join(dir, 'check.mjs'),
    [
      "import { renameSync } from 'node:fs';",
      "const { KubeConfig, Watch } = await import('./kube.js');",
      `renameSync(${JSON.stringify(file)}, ${JSON.stringify(away)});`,
      'const kc = new KubeConfig();',
      "kc.loadFromOptions({ clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }], users: [{ name: 'u', token: 't' }],",
      "  contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });",
      'const options = {};',
      'await kc.applyToHTTPSOptions(options);',
      'new Watch(kc);',
      'let before;',
      'const tls = { rejectUnauthorized: true };',
      'try { kc.createDispatcher(kc.getCurrentCluster(), tls); before = "loaded"; } catch (e) { before = e.code; }',
      `renameSync(${JSON.stringify(away)}, ${JSON.stringify(file)});`,
      'const dispatcher = kc.createDispatcher(kc.getCurrentCluster(), tls);',
      "const proxy = kc.createDispatcher({ ...kc.getCurrentCluster(), proxyUrl: 'http://127.0.0.1:3128' }, tls);",
      'const undici = (await import("node:module")).createRequire(import.meta.url)("./' + UNDICI_FILE + '");',
      'console.log(JSON.stringify({ before, agent: options.agent?.constructor?.name, dispatcher: dispatcher.constructor.name,',
      '  request: typeof dispatcher.request, stream: typeof dispatcher.stream, fetch: typeof undici.fetch,',
      '  proxy: proxy.constructor.name, same: dispatcher instanceof undici.Agent && proxy instanceof undici.ProxyAgent }));',
    ].join('\n'),
  );
  const run = spawnSync(process.execPath, [join(dir, 'check.mjs')], { encoding: 'utf8' });
  t.equal(run.status, 0, run.stderr);
  t.same(JSON.parse(run.stdout), {
    before: 'MODULE_NOT_FOUND',
    agent: 'Agent',
    dispatcher: 'Agent',
    request: 'function',
    stream: 'function',
    fetch: 'function',
    proxy: 'ProxyAgent',
    same: true,
  });
});
