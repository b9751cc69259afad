import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { BOUNDS } from '../limits/bounds.js';

export interface ConnectionCounts {
  open(): number;
  evicted(): number;
}

/**
 * Bounds the open connections without refusing new ones: at the limit, the idle keep-alive connections are
 * closed, and if that is not enough the oldest connection goes. Node's own `maxConnections` refuses the newest
 * instead, so a flood of idle or slow connections would starve the kubelet's probes and the apiserver; it is
 * kept only as the backstop for connections still in their handshake.
 */
export function limitConnections(server: Server, secure: boolean, max: number = BOUNDS.connections): ConnectionCounts {
  const open = new Set<Socket>();
  let evicted = 0;
  server.maxConnections = max + BOUNDS.handshakes;
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
