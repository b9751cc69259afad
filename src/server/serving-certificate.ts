import { watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from '../log/logger.js';
import { loadServingPair, type ServingPair } from '../certs/serving-pair.js';

/**
 * How often the files are read even without a file event: mounted Secrets change through a `..data`
 * symlink swap that some file systems never report. 10 s keeps a rotation visible well within a minute.
 */
export const POLL_MS = 10_000;
/** File events come in bursts while a pair is written; read once it settles. */
const SETTLE_MS = 200;

/**
 * The serving certificate and key, kept current: the folder is watched and polled, a new pair is checked
 * (readable, matching, in date) before it replaces the old one, and a bad pair is ignored with a log line.
 */
export class ServingCertificate {
  private pair: ServingPair | undefined;
  private problem: string | undefined;
  private watcher: FSWatcher | undefined;
  private poll: NodeJS.Timeout | undefined;
  private settle: NodeJS.Timeout | undefined;
  /** Told of each new pair once watching started (the listener's context swap). */
  private onChange: ((pair: ServingPair) => void) | undefined;

  /** Reads the pair once; `start` keeps it current. */
  constructor(
    private readonly certFile: string,
    private readonly keyFile: string,
    private readonly logger: Logger,
  ) {
    this.reload();
  }

  get current(): ServingPair | undefined {
    return this.pair;
  }

  /** Why the server must not be ready because of its certificate, if it must not. */
  notReadyReason(now = new Date()): string | undefined {
    if (this.pair === undefined) return `no valid serving certificate: ${this.problem ?? 'not loaded'}`;
    if (this.pair.notAfter <= now) return `the serving certificate expired at ${this.pair.notAfter.toISOString()}`;
    return undefined;
  }

  /** Reads the files now. Returns true when a new valid pair was taken. */
  reload(): boolean {
    let next: ServingPair;
    try {
      next = loadServingPair(this.certFile, this.keyFile);
    } catch (error) {
      const message = (error as Error).message;
      if (message !== this.problem) {
        this.logger.error(
          { certFile: this.certFile },
          this.pair === undefined ? message : `ignored a new certificate: ${message}`,
        );
      }
      this.problem = message;
      return false;
    }
    this.problem = undefined;
    if (this.pair !== undefined && this.pair.cert.equals(next.cert) && this.pair.key.equals(next.key)) return false;
    const days = Math.floor((next.notAfter.getTime() - Date.now()) / 86_400_000);
    this.logger.info(
      { serial: next.serial, subject: next.subject, notAfter: next.notAfter.toISOString(), daysLeft: days },
      this.pair === undefined ? 'serving certificate loaded' : 'serving certificate reloaded',
    );
    this.pair = next;
    this.onChange?.(next);
    return true;
  }

  /** Watches and polls the folder (the constructor read it already); each new valid pair goes to `onChange`. */
  start(onChange: (pair: ServingPair) => void): void {
    this.onChange = onChange;
    const folder = dirname(this.certFile);
    try {
      this.watcher = watch(folder, () => this.scheduleReload());
      this.watcher.on('error', (error) =>
        this.logger.warn({ err: error, folder }, 'certificate folder watch failed; polling only'),
      );
    } catch (error) {
      this.logger.warn({ err: error, folder }, 'cannot watch the certificate folder; polling only');
    }
    this.poll = setInterval(() => this.reload(), POLL_MS).unref();
  }

  private scheduleReload(): void {
    clearTimeout(this.settle);
    this.settle = setTimeout(() => this.reload(), SETTLE_MS).unref();
  }

  stop(): void {
    this.watcher?.close();
    clearInterval(this.poll);
    clearTimeout(this.settle);
  }
}
