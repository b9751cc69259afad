// The server's stdout log destination as built (dist/log/logger.js, from src/log/logger.ts), in a process of its
// own: lines logged faster than stdout takes them are held up to 4 MiB; past that, lines are dropped whole and
// counted, never cut, and what is written is exactly what was logged, byte for byte, multi-byte characters included.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { FIXTURES, readJson } from '../helpers/fixtures.js';

interface Case {
  readonly name: string;
  readonly message: string;
  readonly repeat: number;
  readonly lines: number;
}

const LOGGER = fileURLToPath(new URL('../../dist/log/logger.js', import.meta.url));
const MAX_HELD = 4 * 1024 * 1024;

/**
 * Logs `lines` info lines in one turn of the event loop (nothing reaches stdout before the turn ends), then
 * prints the dropped count on stderr and exits, flushing as pino does at exit.
 */
const CHILD = `
const { createLogger, logLinesDropped } = await import(process.argv[1]);
const [message, repeat, lines] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const logger = createLogger('info');
const text = Array.from({ length: repeat }, () => message).join(' ');
for (let seq = 0; seq < lines; seq++) logger.info({ seq, text }, message);
process.stderr.write(String(logLinesDropped()));
`;

function runChild(c: Case): Promise<{ stdout: Buffer; dropped: number; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--input-type=module', '-e', CHILD, LOGGER, c.message, String(c.repeat), String(c.lines)],
      { stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 },
    );
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ stdout: Buffer.concat(out), dropped: Number(err), code }));
  });
}

for (const c of readJson<Case[]>(`${FIXTURES}log/held-lines.json`)) {
  t.test(c.name, async (t) => {
    const { stdout, dropped, code } = await runChild(c);
    t.equal(code, 0, 'exits 0');
    t.equal(stdout.at(-1), 0x0a, 'ends with a whole line');
    const lines = stdout.toString('utf8').split('\n').slice(0, -1);
    const lineBytes = Buffer.byteLength(`${lines[0]}\n`);
    const text = Array.from({ length: c.repeat }, () => c.message).join(' ');
    const parsed = lines.map((line) => JSON.parse(line) as { seq: number; text: string; msg: string });
    t.same(
      parsed.map((p) => p.seq),
      Array.from({ length: lines.length }, (_, seq) => seq),
      'the first lines logged are written, in order, none twice',
    );
    t.ok(
      parsed.every((p) => p.text === text && p.msg === c.message),
      'every written line is the line logged',
    );
    t.equal(lines.length + dropped, c.lines, 'every line logged is written or counted as dropped');
    if (c.lines * lineBytes <= MAX_HELD) {
      t.equal(dropped, 0, 'nothing dropped under the bound');
    } else {
      t.ok(stdout.length <= MAX_HELD, `at most 4 MiB held (${stdout.length} bytes)`);
      t.ok(stdout.length > MAX_HELD - 2 * lineBytes, 'the bound is used up before lines are dropped');
    }
  });
}
