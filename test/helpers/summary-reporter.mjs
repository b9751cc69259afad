// `npm test`'s reporter: each failing assertion with what tap says about it, then one summary line, and nothing
// else, so that the output of a run captured to a file is short and has no cursor codes. tap pipes the raw TAP of
// the run into it and its output to stdout (tap's stream reporter form); tap-parser reads the TAP. A failing
// subtest whose assertions all passed (a file that crashed or timed out) is shown itself.
import { Transform } from 'node:stream';
import { Parser } from 'tap-parser';
import { stringify } from 'yaml';

export default class SummaryReporter extends Transform {
  constructor() {
    super();
    this.started = performance.now();
    this.counts = { pass: 0, fail: 0, skip: 0 };
    this.parser = new Parser();
    this.follow(this.parser);
    this.parser.on('complete', () => {
      const { pass, fail, skip } = this.counts;
      const seconds = ((performance.now() - this.started) / 1000).toFixed(0);
      this.push(`${pass} passed, ${fail} failed${skip > 0 ? `, ${skip} skipped` : ''} in ${seconds} s\n`);
    });
  }

  /** Counts the leaf assertions of a parser and its children; returns how many of them failed, as it goes. */
  follow(parser) {
    const state = { child: undefined, failed: 0 };
    parser.on('child', (child) => (state.child = this.follow(child)));
    parser.on('assert', (result) => {
      const closed = state.child;
      state.child = undefined;
      if (closed !== undefined) {
        // A subtest's own line: counted only when it failed and none of its assertions did.
        state.failed += closed.failed;
        if (result.ok || closed.failed > 0) return;
      } else if (result.skip || result.todo) {
        this.counts.skip += 1;
        return;
      } else if (result.ok) {
        this.counts.pass += 1;
        return;
      }
      this.counts.fail += 1;
      state.failed += 1;
      this.report(result);
    });
    return state;
  }

  report(result) {
    const diag = result.diag ? stringify(result.diag).replace(/^(?=.)/gm, '    ') : '';
    this.push(`not ok ${result.fullname || result.name}\n${diag}`);
  }

  _transform(chunk, _encoding, done) {
    this.parser.write(chunk);
    done();
  }

  _flush(done) {
    this.parser.end();
    done();
  }
}
