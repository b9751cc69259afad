import assert from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as http2 from 'node:http2';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const require = createRequire(import.meta.url);
const lazyAssert = require('../src/packaging/lazy-assert.cjs') as typeof assert;
const lazyHttp2 = require('../src/packaging/lazy-http2.cjs') as typeof http2;
const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Calls `fn` and returns what it threw (or 'returned: value'), for comparing the shim with node:assert. */
const outcome = (fn: () => unknown): unknown => {
  try {
    return `returned: ${String(fn())}`;
  } catch (error) {
    const e = error as { name: string; message: string; code?: string };
    return { name: e.name, message: e.message, code: e.code };
  }
};

t.test('the lazy assert behaves as node:assert', async (t) => {
  const cases: [string, unknown[]][] = [
    ['truthy value', [1, 'never shown']],
    ['truthy object', [{}]],
    ['false with a message', [false, 'sonic.fd must be a number, got string']],
    ['zero with a message', [0, 'zero']],
    ['no argument at all', []],
    ['an Error as the message', [false, new TypeError('custom')]],
  ];
  for (const [name, args] of cases) {
    t.same(
      outcome(() => (lazyAssert as (...a: unknown[]) => unknown)(...args)),
      outcome(() => (assert as (...a: unknown[]) => unknown)(...args)),
      name,
    );
  }
  // Without a message node:assert quotes the caller's source; through the shim that is the shim's own line.
  t.same(
    outcome(() => (lazyAssert as (v: unknown) => void)('')),
    {
      name: 'AssertionError',
      message: 'The expression evaluated to a falsy value:\n\n  Reflect.apply(load(), thisArg, args)\n',
      code: 'ERR_ASSERTION',
    },
    'a falsy value without a message: an AssertionError (the generated message names the shim)',
  );
  t.same(
    outcome(() => lazyAssert.strictEqual(1, 2)),
    outcome(() => assert.strictEqual(1, 2)),
    'other functions are the real ones',
  );
  t.equal(lazyAssert.AssertionError, assert.AssertionError);
  t.ok('deepStrictEqual' in lazyAssert);
});

t.test('the lazy http2 is node:http2 on first use', async (t) => {
  t.equal(lazyHttp2.createSecureServer, http2.createSecureServer);
  t.equal(lazyHttp2.constants, http2.constants);
  t.ok('connect' in lazyHttp2);
  t.same(Object.keys(lazyHttp2).sort(), Object.keys(require('node:http2') as object).sort());
  const { createServer } = lazyHttp2;
  t.equal(createServer, http2.createServer, 'destructuring works');
});

t.test('the bundle starts from its code cache without loading what start-up does not need', async (t) => {
  // Runs the built entry point in a child that reports the built-in modules loaded once the server is serving.
  const script = `
    process.argv = [process.argv[0], 'dist/bundle/main.js', 'serve', '--port=0', '--bind-address=127.0.0.1',
      '--tls-cert-file=certs/dev/tls.crt', '--tls-private-key-file=certs/dev/tls.key', '--shutdown-delay=0'];
    require('./dist/bundle/main.js');
    const poll = setInterval(() => {
      if (!process.moduleLoadList.some((m) => m === 'NativeModule https')) return;
      clearInterval(poll);
      setTimeout(() => {
        process.stderr.write(JSON.stringify(process.moduleLoadList) + '\\n');
        process.kill(process.pid, 'SIGTERM');
      }, 300);
    }, 20);`;
  const result = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  const loaded = JSON.parse(result.stderr.trim().split('\n').pop() ?? '[]') as string[];
  t.ok(loaded.includes('NativeModule https'), 'the server loaded https');
  for (const unneeded of ['assert', 'http2', 'internal/util/colors', 'vm']) {
    const expectLoaded = unneeded === 'vm'; // the loader compiles the bundle with node:vm
    t.equal(loaded.includes(`NativeModule ${unneeded}`), expectLoaded, `${unneeded} ${expectLoaded ? 'is' : 'is not'} loaded`);
  }
  t.match(result.stdout, /"codeCache":"used"/, 'the serving line reports the code cache used');
  t.equal(result.status, 0, 'stops cleanly on SIGTERM');
});
