import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { pino } from 'pino';
import { FLUSH_MS, LineBuffer, MAX_PENDING_BYTES, WRITE_BYTES } from '../src/log/line-buffer.js';

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

/** Waits (bounded) until the file holds `expected` bytes of text. */
async function fileReaches(path: string, length: number): Promise<string> {
  for (let i = 0; i < 200 && readFileSync(path, 'utf8').length < length; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return readFileSync(path, 'utf8');
}

const NO_TIMER = 3_600_000;

t.test('lines are gathered until the write size, then written in one go, in order', async (t) => {
  const { path, fd } = logFile(t);
  const buffer = new LineBuffer(fd, NO_TIMER);
  t.teardown(() => buffer.end());
  const line = (i: number) => `${String(i).padStart(98, '0')}\n`;
  const fit = Math.floor(WRITE_BYTES / 99);
  for (let i = 0; i < fit - 1; i++) buffer.write(line(i));
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(readFileSync(path, 'utf8'), '', 'nothing written below the threshold');
  buffer.write(line(fit - 1));
  buffer.write(line(fit));
  const expected = Array.from({ length: fit + 1 }, (_, i) => line(i)).join('');
  t.equal(await fileReaches(path, expected.length), expected, 'written once past it, in order');
});

t.test('a flush while a write is under way comes after it: nothing lost, nothing reordered', async (t) => {
  const { path, fd } = logFile(t);
  const buffer = new LineBuffer(fd, NO_TIMER);
  const lines = Array.from({ length: 3000 }, (_, i) => `{"n":${i}}\n`);
  for (const l of lines) buffer.write(l);
  buffer.flushSync();
  buffer.end();
  const text = await fileReaches(path, lines.join('').length);
  t.equal(text, lines.join(''));
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
  // Left open: the failing write runs on libuv's pool and may still be queued when the test ends; closing the
  // descriptor would let the next test's file take its number and receive this write.
  const readOnly = openSync(tmpdir(), 'r');
  const buffer = new LineBuffer(readOnly);
  buffer.write('x'.repeat(WRITE_BYTES));
  t.doesNotThrow(() => buffer.end());
});

t.test('lines that cannot be written yet are held up to a limit, then dropped and counted', async (t) => {
  const { path, fd } = logFile(t);
  const buffer = new LineBuffer(fd, NO_TIMER);
  const line = `${'y'.repeat(1023)}\n`;
  // Held back by a write under way: fill past the limit before the event loop lets it finish.
  const total = MAX_PENDING_BYTES / line.length + 100;
  let refused = 0;
  for (let i = 0; i < total; i++) if (!buffer.write(line)) refused++;
  t.ok(refused > 0 && refused < total, `some lines refused (${refused} of ${total})`);
  await new Promise((resolve) => setTimeout(resolve, 200));
  buffer.write('{"msg":"after"}\n');
  buffer.end();
  for (let i = 0; i < 200 && !readFileSync(path, 'utf8').endsWith('"msg":"after"}\n'); i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const written = readFileSync(path, 'utf8');
  t.match(written, new RegExp(`"msg":"${refused} log lines dropped: stdout was not read for a while"`));
  t.match(written, /"msg":"after"\}\n$/);
  t.equal(written.split('\n').filter((l) => l.startsWith('y')).length, total - refused, 'every line held was written');
});
