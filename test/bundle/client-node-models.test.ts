import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import t from 'tap';
import { ObjectSerializer as Library } from '@kubernetes/client-node/dist/serializer.js';
import { BUNDLE_OPTIONS } from '../../src/packaging/bundle-options.js';
import {
  buildModelsFile,
  clientNodeModelsWhenUsed,
  MODELS_FILE,
  modelsWhenUsed,
  serializer,
} from '../../src/packaging/client-node-models.js';
import { UNDICI_FILE } from '../../src/packaging/client-node-undici.js';

// client-node's ObjectSerializer (the one ListWatch imports) bundled as the server's bundle has it (build-bundle.ts): the model classes in a
// file of their own, required when first used. It must answer as the library itself does.
const dir = mkdtempSync(join(tmpdir(), 'sw-models-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'ns', labels: { a: 'b' }, creationTimestamp: '2026-01-02T03:04:05Z' },
  spec: {
    containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80 }], resources: { limits: { memory: '1Gi' } } }],
    volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'claim' } }],
  },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  unknownField: { kept: true },
};

t.test('the bundled serializer answers as the library does, with the models loaded only when used', async (t) => {
  await build({
    ...BUNDLE_OPTIONS,
    stdin: {
      contents: "export { ObjectSerializer } from '@kubernetes/client-node/dist/serializer.js';",
      resolveDir: process.cwd(),
      loader: 'js',
    },
    outfile: join(dir, 'serializer.js'),
    plugins: [clientNodeModelsWhenUsed],
  });
  await buildModelsFile(dir);
  const bundled = readFileSync(join(dir, 'serializer.js'), 'utf8');
  t.notMatch(bundled, /V1PodSpec\s*=\s*class/, 'no model class is in the serializer bundle');
  t.match(readFileSync(join(dir, MODELS_FILE), 'utf8'), /V1PodSpec\s*=\s*class/, 'the models file has them');

  // Run in a plain Node process, as the server runs: tap's module hooks get in the way of require(esm). The
  // models file is moved away after the import: a serializer that needs it then has not loaded it yet.
  const cases = [
    ['V1Pod', pod],
    ['V1ObjectMeta', pod.metadata],
    ['Array<V1Container>', pod.spec.containers],
    ['string', 'text'],
    ['NoSuchModel', { x: 1 }],
  ] as const;
  writeFileSync(
    join(dir, 'check.mjs'),
    [
      "import { renameSync } from 'node:fs';",
      "const { ObjectSerializer } = await import('./serializer.js');",
      `renameSync('${join(dir, MODELS_FILE)}', '${join(dir, 'away.js')}');`,
      'let before;',
      "try { ObjectSerializer.deserialize(JSON.parse(process.argv[2])[0][1], 'V1Pod'); before = 'loaded'; } catch (e) { before = e.code; }",
      `renameSync('${join(dir, 'away.js')}', '${join(dir, MODELS_FILE)}');`,
      'const answers = JSON.parse(process.argv[2]).map(([type, data]) => {',
      '  const object = ObjectSerializer.deserialize(data, type);',
      '  return { object, className: object?.constructor?.name, serialized: ObjectSerializer.serialize(object, type) };',
      '});',
      'console.log(JSON.stringify({ before, answers }));',
    ].join('\n'),
  );
  const run = spawnSync(process.execPath, [join(dir, 'check.mjs'), JSON.stringify(cases)], { encoding: 'utf8' });
  t.equal(run.status, 0, run.stderr);
  const { before, answers } = JSON.parse(run.stdout) as {
    before: string;
    answers: { object: unknown; className?: string; serialized: unknown }[];
  };
  t.equal(before, 'MODULE_NOT_FOUND', 'the models file is not loaded before the serializer needs it');
  for (const [i, [type, data]] of cases.entries()) {
    const theirs = Library.deserialize(data, type);
    const ours = answers[i];
    t.same(ours?.object, JSON.parse(JSON.stringify(theirs)), `deserialize ${type}`);
    // esbuild names a class that refers to itself `_V1Pod`, in this bundle as in the earlier one.
    t.equal(ours?.className?.replace(/^_/, ''), theirs?.constructor?.name, `deserialize ${type}: the same class`);
    t.same(ours?.serialized, JSON.parse(JSON.stringify(Library.serialize(theirs, type))), `serialize ${type}`);
  }
});

t.test('the rewrite stops the build when client-node changes the shape it expects', async (t) => {
  const source = readFileSync(serializer, 'utf8');
  t.ok(existsSync(serializer));
  t.doesNotThrow(() => modelsWhenUsed(source), 'the installed client-node has the expected shape');
  t.throws(() => modelsWhenUsed(source.replace('let typeMap = {', 'const typeMap = {')), /no `let typeMap/);
  t.throws(
    () => modelsWhenUsed(source.replace(/\n {4}"V1Pod": V1Pod,/, '')),
    /typeMap does not name exactly the imported models/,
  );
  t.throws(() => modelsWhenUsed(`import { x } from 'y';\n${source}`), /unexpected: import \{ x \} from 'y'/);
  t.throws(
    () => modelsWhenUsed(`${source}\nconst names = Object.keys(typeMap);\n`),
    /typeMap used other than by name: const names = Object.keys\(typeMap\);/,
  );
});

t.test('the shipped bundle has both files beside its chunks, and their code in no other output', async (t) => {
  const chunks = join('dist', 'bundle', 'chunks');
  const outputs = readdirSync(join('dist', 'bundle'), { recursive: true, encoding: 'utf8' }).filter((f) => /\.c?js$/.test(f));
  t.ok(existsSync(join(chunks, MODELS_FILE)) && existsSync(join(chunks, UNDICI_FILE)), 'both files are in chunks/');
  for (const output of outputs.filter((f) => ![MODELS_FILE, UNDICI_FILE].includes(f.split('/').pop() as string))) {
    const text = readFileSync(join('dist', 'bundle', output), 'utf8');
    // Every model class sets its attribute table; serializer.js's KubernetesObject, which is no model, does too.
    // A model class here as well would be a second copy of it, which `instanceof` would tell apart.
    t.notMatch(text, /\b(?!KubernetesObject\b)\w+\.attributeTypeMap\s*=\s*\[/, `${output}: no model class`);
    t.notMatch(text, /UND_ERR_CONNECT_TIMEOUT/, `${output}: no undici code`);
  }
});
