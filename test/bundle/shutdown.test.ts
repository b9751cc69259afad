import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import t from 'tap';
import { testApp } from '../helpers/app.js';
import { startBuiltServer } from '../helpers/built-server.js';
import { FIXTURES } from '../helpers/fixtures.js';
import { httpsRequest } from '../helpers/https.js';

for (const signals of [['SIGTERM'], ['SIGTERM', 'SIGTERM'], ['SIGINT', 'SIGTERM']] as const) {
  t.test(
    `${signals.join(' then ')}: not ready at once, keeps serving through the delay, no accepted request fails, exit 0`,
    async (t) => {
      const { child, port, ca, output } = await startBuiltServer(t, { args: ['--shutdown-delay=1'] });
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const body = readFileSync(`${FIXTURES}samples/second-default-class.json`, 'utf8');
      const agent = new Agent({ keepAlive: true, maxSockets: 4 });
      t.teardown(() => agent.destroy());
      const outcomes = { ok: 0, refused: 0, failed: [] as string[] };
      let sigtermAt = 0;
      let closed = false;
      /** One request; `secured` says whether its connection had finished the TLS handshake (was accepted). */
      const send = (): Promise<{ status: number; body: string }> =>
        new Promise((resolve, reject) => {
          let secured = false;
          const req = request(
            { host: '127.0.0.1', port, method: 'POST', path: '/validate', ca, servername: 'localhost', agent, timeout: 5000 },
            (res) => {
              let text = '';
              res.on('data', (c: Buffer) => (text += c.toString()));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
            },
          );
          req.setHeader('content-type', 'application/json');
          req.on('socket', (socket) => {
            if (!socket.connecting) secured = true;
            else socket.once('secureConnect', () => (secured = true));
          });
          req.on('timeout', () => req.destroy(new Error('request timed out')));
          req.on('error', (error) => reject(Object.assign(error, { secured })));
          req.end(body);
        });
      const worker = async (): Promise<void> => {
        while (!closed) {
          try {
            const answer = await send();
            if (answer.status === 200 && answer.body.includes('"allowed":false')) outcomes.ok += 1;
            else outcomes.failed.push(`status ${answer.status}`);
          } catch (error) {
            const { code, secured } = error as NodeJS.ErrnoException & { secured: boolean };
            // Never accepted: refused (the listener is closed), or reset before its TLS handshake finished (it was
            // still in the kernel's accept queue when the listener closed). The apiserver tries another endpoint.
            if (code === 'ECONNREFUSED' || !secured) {
              outcomes.refused += 1;
              closed = true;
            } else outcomes.failed.push(`${code ?? ''} ${(error as Error).message}`);
          }
        }
      };
      const workers = Array.from({ length: 4 }, worker);
      await new Promise((r) => setTimeout(r, 300));
      sigtermAt = Date.now();
      child.kill(signals[0]);
      await new Promise((r) => setTimeout(r, 100));
      // A second signal must not cut the drain short.
      if (signals[1] !== undefined) child.kill(signals[1]);
      await new Promise((r) => setTimeout(r, 100));
      const readiness = await httpsRequest(port, { method: 'GET', path: '/readyz', ca });
      t.same([readiness.status, readiness.body], [503, 'not ready: shutting down'], 'not ready during the delay');
      const code = await exited;
      closed = true;
      await Promise.all(workers);
      t.equal(code, 0, 'exit 0');
      t.ok(Date.now() - sigtermAt < 5000, 'well within the grace period');
      t.same(outcomes.failed, [], `no accepted request failed (${outcomes.ok} answered)`);
      t.ok(outcomes.ok > 20, 'requests were answered while draining');
      t.match(output(), '"msg":"stopped"');
      const decided = output()
        .split('\n')
        .filter((l) => l.includes('"allowed":false')).length;
      t.equal(decided, outcomes.ok, 'a decision line for every answer: none lost');
      if (signals[1] !== undefined) t.match(output(), 'already shutting down; the drain goes on');
    },
  );
}

t.test('during shutdown every answer carries Connection: close, as docs/operations.md says', async (t) => {
  const { app } = testApp({ closing: () => true, readiness: { checks: () => [{ name: 'test', problems: ['shutting down'] }] } });
  t.teardown(() => app.close());
  for (const [method, url] of [
    ['GET', '/healthz'],
    ['GET', '/readyz'],
    ['GET', '/no-such-path'],
    ['POST', '/validate'],
    ['POST', '/convert'],
  ] as const) {
    const res = await app.inject({
      method,
      url,
      payload: method === 'POST' ? '{}' : undefined,
      headers: { 'content-type': 'application/json' },
    });
    t.equal(res.headers.connection, 'close', `${method} ${url} (${res.statusCode})`);
  }
});
