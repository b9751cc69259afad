import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { pino } from 'pino';
import { FLUSH_MS, LineBuffer, WRITE_BYTES } from '../src/log/line-buffer.js';

function logFile(t: { teardown(fn: () => void): void }): { path: string; fd: number } {
  const dir = mkdtempSync(join(tmpdir(), 'sw-lines-'));
  const path = join(dir, 'out.log');
  const fd = openSync(path, 'a');
  t.teardown(() => {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  });
  return { path, fd };
}

t.test('lines are gathered until about 4 KiB, then written in one go, in order', async (t) => {
  const { path, fd } = logFile(t);
  const buffer = new LineBuffer(fd);
  t.teardown(() => buffer.end());
  const line = `${'x'.repeat(99)}\n`;
  const fit = Math.floor(WRITE_BYTES / line.length);
  for (let i = 0; i < fit - 1; i++) buffer.write(line);
  t.equal(readFileSync(path, 'utf8'), '', 'nothing written below the threshold');
  buffer.write(line);
  buffer.write(line);
  t.equal(readFileSync(path, 'utf8'), line.repeat(fit + 1), 'written once past it');
});

t.test('a quiet logger still writes within the flush interval', async (t) => {
  const { path, fd } = logFile(t);
  const buffer = new LineBuffer(fd);
  t.teardown(() => buffer.end());
  buffer.write('{"msg":"one"}\n');
  await new Promise((resolve) => setTimeout(resolve, FLUSH_MS * 3));
  t.equal(readFileSync(path, 'utf8'), '{"msg":"one"}\n');
});

t.test("pino's flush and end write what is left; multi-byte text is kept whole", async (t) => {
  const { path, fd } = logFile(t);
  const buffer = new LineBuffer(fd);
  const logger = pino({ base: null, timestamp: false }, buffer);
  logger.info({ name: 'snäpshot-日本' }, 'kept');
  logger.flush();
  t.same(JSON.parse(readFileSync(path, 'utf8')), { level: 30, name: 'snäpshot-日本', msg: 'kept' });
  logger.info('last');
  buffer.end();
  t.match(readFileSync(path, 'utf8'), /"msg":"last"\}\n$/);
});

t.test('a descriptor that cannot be written drops the lines without throwing', async (t) => {
  const readOnly = openSync(tmpdir(), 'r');
  t.teardown(() => closeSync(readOnly));
  const buffer = new LineBuffer(readOnly);
  buffer.write('x'.repeat(WRITE_BYTES));
  t.doesNotThrow(() => buffer.end());
});
