// A round-robin TCP proxy on loopback: stands for a Service in front of two webhook replicas.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { freePort } from './processes.js';

export interface RoundRobin {
  readonly port: number;
  /** Connections handed to each backend, by index. */
  readonly connections: number[];
  close(): Promise<void>;
}

/** A TCP proxy: each connection to the next backend in turn, or to the other one when that refuses. */
export async function roundRobin(backends: readonly number[]): Promise<RoundRobin> {
  const sockets = new Set<Socket>();
  const connections = backends.map(() => 0);
  let next = 0;
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  const server: Server = createServer((client) => {
    track(client);
    client.on('error', () => client.destroy());
    const first = next++ % backends.length;
    const attempt = (n: number): void => {
      const index = (first + n) % backends.length;
      const upstream = connect({ host: '127.0.0.1', port: backends[index] as number });
      track(upstream);
      let connected = false;
      upstream.once('connect', () => {
        connected = true;
        connections[index] = (connections[index] ?? 0) + 1;
        client.pipe(upstream);
        upstream.pipe(client);
      });
      upstream.on('error', () => {
        upstream.destroy();
        if (!connected && n + 1 < backends.length) attempt(n + 1);
        else client.destroy();
      });
      client.on('close', () => upstream.destroy());
    };
    attempt(0);
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port,
    connections,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
