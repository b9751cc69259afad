import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { BOUNDS } from '../limits/bounds.js';

export interface ConnectionCounts {
  open(): number;
  evicted(): number;
}

/** Node's own refusal, far past the two bounds below: only a backstop if eviction ever falls behind. */
const BACKSTOP = 4;

/**
 * Bounds the connections without refusing new ones, so that a flood of idle connections or of handshakes that
 * never finish cannot starve the kubelet's probes or the apiserver:
 * - established connections: at `max`, the idle keep-alive ones are closed, and if that is not enough the oldest;
 * - connections still in their TLS handshake: at `BOUNDS.handshakes`, the oldest of them is closed.
 * Node's `maxConnections` refuses the newest instead; it stays only as a backstop far above both.
 */
export function limitConnections(server: Server, secure: boolean, max: number = BOUNDS.connections): ConnectionCounts {
  const open = new Set<Socket>();
  let evicted = 0;
  server.maxConnections = BACKSTOP * (max + BOUNDS.handshakes);
  if (secure) limitHandshakes(server, () => (evicted += 1));
  server.on(secure ? 'secureConnection' : 'connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    if (open.size <= max) return;
    server.closeIdleConnections();
    let live = 0;
    for (const s of open) if (!s.destroyed) live += 1;
    // Oldest first (insertion order); never the connection that just arrived.
    for (const s of open) {
      if (live <= max) break;
      if (!s.destroyed && s !== socket) {
        s.destroy();
        live -= 1;
      }
    }
    for (const s of open) {
      if (!s.destroyed) continue;
      open.delete(s);
      evicted += 1;
    }
  });
  return { open: () => open.size, evicted: () => evicted };
}

/**
 * Connections accepted but not yet secure, by their address and port (a TLS socket has its TCP socket's), so that
 * the oldest can be closed when a new one arrives past the bound.
 */
function limitHandshakes(server: Server, onEvicted: () => void): void {
  const pending = new Map<string, Socket>();
  const key = (s: Socket): string => `${s.remoteAddress ?? ''}:${s.remotePort ?? ''}`;
  server.on('connection', (socket: Socket) => {
    const id = key(socket);
    pending.set(id, socket);
    socket.once('close', () => {
      if (pending.get(id) === socket) pending.delete(id);
    });
    // Oldest first (insertion order); the one that just arrived is last.
    for (const [oldId, old] of pending) {
      if (pending.size <= BOUNDS.handshakes || old === socket) break;
      pending.delete(oldId);
      old.destroy();
      onEvicted();
    }
  });
  server.on('secureConnection', (socket: Socket) => pending.delete(key(socket)));
}
