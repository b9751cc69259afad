'use strict';
// What the bundle gets for `require('http2')`: node:http2, loaded on first use. Fastify requires it at load
// time but uses it only for an HTTP/2 server, which this webhook never starts (about 5-10 ms of start-up).
let real;
const load = () => (real ??= require('node:http2'));
module.exports = new Proxy(
  {},
  {
    get: (_target, key) => load()[key],
    has: (_target, key) => key in load(),
    ownKeys: () => Reflect.ownKeys(load()),
    getOwnPropertyDescriptor: (_target, key) => {
      const descriptor = Object.getOwnPropertyDescriptor(load(), key);
      return descriptor === undefined ? undefined : { ...descriptor, configurable: true };
    },
  },
);
