/**
 * The answers decided in one turn of the event loop, written together at its end (`setImmediate`): a saturated
 * server reads many requests in each turn, and deciding them all before writing any answer costs less CPU than
 * taking turns between the two. On loopback, as on a single node's pod network, a write also runs the client's
 * receiving side in the kernel and wakes it; answers written in a row find it awake (docs/benchmarks.md, "What
 * the measurements chose"). At low load a turn holds one request, and its answer waits only for the hop to the
 * end of the turn.
 */
export class TurnAnswers {
  private turnEnd: Promise<void> | undefined;

  /**
   * Resolves at the end of the current turn, once for every answer decided in it. Call it before recording the
   * decision (decision-records.ts), so that the turn's answers are written before its decisions are recorded.
   */
  end(): Promise<void> {
    this.turnEnd ??= new Promise<void>((resolve) =>
      setImmediate(() => {
        this.turnEnd = undefined;
        resolve();
      }),
    );
    return this.turnEnd;
  }
}
