import { write, writeSync } from 'node:fs';

/** Lines are gathered into writes of about this many bytes. */
export const WRITE_BYTES = 8192;
/** Whatever is gathered is written at least this often, so a quiet server's lines still appear at once. */
export const FLUSH_MS = 250;
/** A full non-blocking pipe is retried after this long rather than losing lines. */
const RETRY_MS = 5;
/** Lines waiting beyond this (stdout not read for a long while) are dropped and counted, not held. */
export const MAX_PENDING_BYTES = 4 * 1024 * 1024;

/**
 * pino's destination: lines gathered in memory and written to a file descriptor in one `write` per ~8 KiB,
 * on libuv's thread pool so the event loop does not wait for the pipe or the disk. One synchronous write per
 * line cost 12 µs a request under load, and a synchronous write per 4 KiB still showed in the profile (both
 * measured); sonic-boom, pino's own destination, also gathers, but measures the whole pending buffer on every
 * line and fsyncs on every timed flush. Lines stay in order: one write at a time. `flushSync` (at exit) writes
 * what is gathered at once if nothing is under way, or right after the write under way (the process does not
 * exit before that write is done). If stdout is not read (a stuck log collector), at most 4 MiB wait; further
 * lines are dropped and a line saying how many is written once writing resumes. A descriptor that cannot be
 * written drops the lines: there is no one left to tell.
 */
export class LineBuffer {
  private lines: string[] = [];
  private bytes = 0;
  private writing = false;
  private flushRequested = false;
  private dropped = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly fd: number,
    flushMs = FLUSH_MS,
  ) {
    this.timer = setInterval(() => this.startWrite(), flushMs);
    this.timer.unref();
  }

  write(line: string): boolean {
    if (this.bytes >= MAX_PENDING_BYTES) {
      this.dropped++;
      return false;
    }
    this.lines.push(line);
    // String length counts UTF-16 units, not bytes: close enough to decide when to write.
    this.bytes += line.length;
    if (this.bytes >= WRITE_BYTES) this.startWrite();
    return true;
  }

  /** Writes what is gathered now, or as soon as the write under way is done. */
  flushSync(): void {
    if (this.writing) {
      this.flushRequested = true;
      return;
    }
    const data = this.take();
    if (data !== undefined) writeAllSync(this.fd, data);
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

  private take(): Buffer | undefined {
    if (this.dropped > 0) {
      this.lines.push(
        `{"level":40,"time":${Date.now()},"msg":"${this.dropped} log lines dropped: stdout was not read for a while"}\n`,
      );
      this.dropped = 0;
    }
    if (this.lines.length === 0) return undefined;
    const data = Buffer.from(this.lines.join(''));
    this.lines = [];
    this.bytes = 0;
    return data;
  }

  private startWrite(): void {
    if (this.writing) return;
    const data = this.take();
    if (data === undefined) return;
    this.writing = true;
    this.writeFrom(data, 0);
  }

  private writeFrom(data: Buffer, offset: number): void {
    write(this.fd, data, offset, data.length - offset, null, (error, written) => {
      if (error?.code === 'EAGAIN') return void setTimeout(() => this.writeFrom(data, offset), RETRY_MS);
      if (error === null && offset + written < data.length) return this.writeFrom(data, offset + written);
      this.writing = false;
      if (this.flushRequested) {
        this.flushRequested = false;
        this.flushSync();
      } else if (this.bytes >= WRITE_BYTES) this.startWrite();
    });
  }
}

function writeAllSync(fd: number, data: Buffer): void {
  let offset = 0;
  while (offset < data.length) {
    try {
      offset += writeSync(fd, data, offset);
    } catch (error) {
      // A full non-blocking pipe: wait for the reader rather than lose lines; anything else drops them.
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') return;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}
