import { writeSync } from 'node:fs';

/** Lines are gathered into writes of about this many bytes. */
export const WRITE_BYTES = 4096;
/** Whatever is gathered is written at least this often, so a quiet server's lines still appear at once. */
export const FLUSH_MS = 250;

/**
 * pino's destination: lines gathered in memory and written to a file descriptor in one `write` per ~4 KiB.
 * One write syscall per line cost 12 µs a request under load (measured); sonic-boom, pino's own destination,
 * gathers too, but measures the whole pending buffer on every line and fsyncs on every timed flush (tens of
 * milliseconds on a log file under load, measured in the bench). Writes are synchronous, so at exit nothing is
 * left behind once `flush` returns. A descriptor that cannot be written (a closed pipe) drops the lines: there
 * is no one left to tell.
 */
export class LineBuffer {
  private lines: string[] = [];
  private bytes = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly fd: number) {
    this.timer = setInterval(() => this.flushSync(), FLUSH_MS);
    this.timer.unref();
  }

  write(line: string): boolean {
    this.lines.push(line);
    // String length counts UTF-16 units, not bytes: close enough to decide when to write.
    this.bytes += line.length;
    if (this.bytes >= WRITE_BYTES) this.flushSync();
    return true;
  }

  flushSync(): void {
    if (this.lines.length === 0) return;
    const text = this.lines.length === 1 ? (this.lines[0] as string) : this.lines.join('');
    this.lines = [];
    this.bytes = 0;
    writeAll(this.fd, Buffer.from(text));
  }

  /** pino's `logger.flush(cb)` calls this. */
  flush(done?: (error?: Error) => void): void {
    this.flushSync();
    done?.();
  }

  end(): void {
    this.flushSync();
    clearInterval(this.timer);
  }
}

function writeAll(fd: number, data: Buffer): void {
  let offset = 0;
  while (offset < data.length) {
    try {
      offset += writeSync(fd, data, offset);
    } catch (error) {
      // A full pipe (non-blocking stdout): wait for the reader rather than lose lines; anything else drops them.
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') return;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}
