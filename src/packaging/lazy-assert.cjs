'use strict';
// What the bundle gets for `require('assert')`: node:assert, loaded only when an assertion fails or another of
// its functions is used. The router and sonic-boom require it at load time for argument checks that pass;
// loading it costs about 10 ms of start-up, most of it creating process.stderr to see whether it has colours
// (measured, docs/benchmarks.md). `assert(value, message)` with a truthy value returns undefined, as node:assert;
// one difference: a failed assertion without a message quotes this file's line, not the caller's.
let real;
const load = () => (real ??= require('node:assert'));
module.exports = new Proxy(function assert() {}, {
  apply: (_target, thisArg, args) => (args.length > 0 && args[0] ? undefined : Reflect.apply(load(), thisArg, args)),
  get: (_target, key) => load()[key],
  has: (_target, key) => key in load(),
});
