import { readFileSync } from 'node:fs';
import t from 'tap';
import { parseFlags, UsageError } from '../../src/config/flags.js';
import { parseServeOptions, SERVE_FLAGS } from '../../src/config/serve-options.js';

const REQUIRED = ['--tls-cert-file=c', '--tls-private-key-file=k'];

t.test('defaults', async (t) => {
  const o = parseServeOptions(REQUIRED, {});
  t.match(o, {
    tlsCertFile: 'c',
    tlsKeyFile: 'k',
    port: 8443,
    bindAddress: '0.0.0.0',
    kubeconfig: undefined,
    classesFrom: undefined,
    preventVolumeModeConversion: true,
    mode: 'enforce',
    logLevel: 'info',
    shutdownDelayMs: 5000,
  });
  t.same([...o.warnRules], []);
});

t.test('upstream argument forms keep working', async (t) => {
  const o = parseServeOptions(
    [
      '-tls-cert-file',
      'c',
      '--tls-private-key-file',
      'k',
      '--port=443',
      '--prevent-volume-mode-conversion=false',
      '--enable-volume-group-snapshot-webhook',
      '--v=5',
      '--kubeconfig=/kc',
    ],
    {},
  );
  t.match(o, { tlsCertFile: 'c', port: 443, preventVolumeModeConversion: false, logLevel: 'debug', kubeconfig: '/kc' });
});

t.test("klog's flags, as an upstream Deployment passes them, are accepted, ignored and named", async (t) => {
  const o = parseServeOptions(
    [
      ...REQUIRED,
      '--logtostderr',
      '--alsologtostderr=false',
      '-v',
      '5',
      '-log_dir=/var/log',
      '--log_file',
      '/tmp/x.log',
      '--log_file_max_size=10',
      '--stderrthreshold=INFO',
      '--vmodule=webhook=4',
      '--skip_headers',
      '--logtostderr=true',
    ],
    {},
  );
  t.same(o.ignoredFlags, [
    'logtostderr',
    'alsologtostderr',
    'log_dir',
    'log_file',
    'log_file_max_size',
    'stderrthreshold',
    'vmodule',
    'skip_headers',
  ]);
  t.equal(o.logLevel, 'debug', '-v 5 is honoured');
  t.equal(o.tlsCertFile, 'c', 'the flags around them are read as before');
  t.same(parseServeOptions(REQUIRED, {}).ignoredFlags, [], 'none given, none named');
  t.throws(
    () => parseServeOptions([...REQUIRED, '--logtostderr=maybe'], {}),
    UsageError,
    'a boolean still takes only true or false',
  );
  t.throws(() => parseServeOptions([...REQUIRED, '--log-dir=/x'], {}), /unknown flag --log-dir/, 'only the names klog registers');
});

t.test('environment variables, and the command line wins', async (t) => {
  const env = {
    SNAPSHOT_WEBHOOK_TLS_CERT_FILE: 'envc',
    SNAPSHOT_WEBHOOK_TLS_PRIVATE_KEY_FILE: 'envk',
    SNAPSHOT_WEBHOOK_PORT: '9443',
    SNAPSHOT_WEBHOOK_MODE: 'warn',
    SNAPSHOT_WEBHOOK_WARN_RULES: 'field-immutable, default-class-unique',
    KUBECONFIG: '/home/kc',
  };
  const o = parseServeOptions(['--port=1234'], env);
  t.match(o, { tlsCertFile: 'envc', port: 1234, mode: 'warn', kubeconfig: '/home/kc' });
  t.same([...o.warnRules], ['field-immutable', 'default-class-unique']);
  t.equal(
    parseServeOptions([...REQUIRED, '--classes-from=x'], env).kubeconfig,
    undefined,
    '--classes-from means standalone even with KUBECONFIG set',
  );
});

t.test('one-line errors naming the flag', async (t) => {
  const cases: [string[], string | RegExp][] = [
    [[], '--tls-cert-file is required (or set SNAPSHOT_WEBHOOK_TLS_CERT_FILE)'],
    [[...REQUIRED, '--port=x'], 'flag (--port): expected a whole number between 0 and 65535, got "x"'],
    [[...REQUIRED, '--port='], 'flag (--port): expected a whole number between 0 and 65535, got ""'],
    [[...REQUIRED, '--mode=audit'], 'flag (--mode): expected one of enforce, warn, got "audit"'],
    [
      [...REQUIRED, '--warn-rules=class-cache-unavailable'],
      /flag \(--warn-rules\): unknown value "class-cache-unavailable"; one of /,
    ],
    [
      [...REQUIRED, '--prevent-volume-mode-conversion=maybe'],
      'flag (--prevent-volume-mode-conversion): expected true or false, got "maybe"',
    ],
    [[...REQUIRED, '--bogus'], 'unknown flag --bogus; see --help'],
    [[...REQUIRED, '--bind-address'], '--bind-address: needs a value'],
    [[...REQUIRED, 'extra'], 'unexpected argument "extra"; serve takes only flags'],
    [
      [...REQUIRED, '--classes-from=a', '--kubeconfig=b'],
      '--classes-from and --kubeconfig both name where classes come from; give one',
    ],
    [['--tls-cert-file='], 'flag (--tls-cert-file): must not be empty'],
  ];
  for (const [argv, message] of cases)
    t.throws(() => parseServeOptions(argv, {}), typeof message === 'string' ? new UsageError(message) : message, argv.join(' '));
  t.throws(
    () => parseServeOptions(REQUIRED, { SNAPSHOT_WEBHOOK_PORT: 'abc' }),
    new UsageError('environment SNAPSHOT_WEBHOOK_PORT (--port): expected a whole number between 0 and 65535, got "abc"'),
  );
});

t.test('positionals and --', async (t) => {
  const parsed = parseFlags([{ name: 'x', type: 'string', help: '' }], ['a', '-', '--x', 'v', '--', '--not-a-flag'], {});
  t.same(parsed.positionals, ['a', '-', '--not-a-flag']);
  t.equal(parsed.values.get('x'), 'v');
});

t.test('the README documents every serve flag and its environment variable', async (t) => {
  const readme = readFileSync('README.md', 'utf8');
  for (const flag of SERVE_FLAGS.filter((f) => f.ignored === true)) {
    t.match(readme, `\`--${flag.name}\``, `klog's --${flag.name} is named as accepted and ignored`);
  }
  for (const flag of SERVE_FLAGS.filter((f) => f.name !== 'help' && f.ignored !== true)) {
    const row = readme.split('\n').find((l) => new RegExp(`^\\|\\s*\`--${flag.name}\`\\s*\\|`).test(l));
    t.ok(row, `--${flag.name} has a row`);
    if (flag.env !== undefined) t.match(row, `\`${flag.env}\``, `${flag.env} documented`);
  }
  const names = new Set(SERVE_FLAGS.map((f) => f.name));
  for (const [, name] of readme.matchAll(/^\|\s*`--([a-z-]+)`\s*\|/gm))
    t.ok(names.has(name as string), `the README's --${name} is a serve flag`);
});
