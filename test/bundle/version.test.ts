// The version is said in one voice: --version on every command, the serving log line, build_info.
import { readFileSync } from 'node:fs';
import { get } from 'node:https';
import t from 'tap';
import { startBuiltServer } from '../helpers/built-server.js';
import { runCli } from '../helpers/cli.js';

const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };

t.test('--version on every command', async (t) => {
  for (const args of [[], ['serve'], ['validate'], ['audit'], ['review'], ['certs'], ['policy'], ['help']]) {
    const r = runCli([...args, '--version']);
    t.equal(r.stdout, `snapshot-webhook ${version}\n`, `${args.join(' ') || '(none)'} --version`);
    t.equal(r.status, 0);
  }
});

t.test('CHANGELOG.md: its top version is the version, and LICENSE is Apache-2.0 as package.json says', async (t) => {
  const top = /^## (\S+)/m.exec(readFileSync('CHANGELOG.md', 'utf8'))?.[1];
  t.equal(top, version);
  t.equal((JSON.parse(readFileSync('package.json', 'utf8')) as { license: string }).license, 'Apache-2.0');
  t.match(readFileSync('LICENSE', 'utf8'), /^\s+Apache License\n\s+Version 2\.0, January 2004/);
});

t.test('the serving log line and snapshot_webhook_build_info carry it', async (t) => {
  const server = await startBuiltServer(t);
  const serving = server
    .output()
    .split('\n')
    .find((l) => l.includes('serving admission reviews'));
  t.match(JSON.parse(serving ?? '{}'), { version });
  const metrics = await new Promise<string>((resolve, reject) => {
    get({ host: '127.0.0.1', port: server.port, path: '/metrics', ca: server.ca, servername: 'localhost' }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve(body));
    }).on('error', reject);
  });
  t.match(metrics, `snapshot_webhook_build_info{version="${version}",node="${process.versions.node}"} 1`);
});
