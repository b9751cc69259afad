import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Connections held at most. Each costs about 40-70 KB (TLS and socket buffers, docs/reliability.md); 500 of
 * them fit beside the 64 MB heap in the 192 Mi container limit. The apiserver needs a handful per replica.
 */
export const MAX_CONNECTIONS = 500;

/** Connections still in their TLS handshake, at most: refused past it (each is cut after 4 s anyway). */
export const MAX_HANDSHAKES = 200;

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
export function limitConnections(server: Server, secure: boolean, max = MAX_CONNECTIONS): ConnectionCounts {
  const open = new Set<Socket>();
  let evicted = 0;
  server.maxConnections = max + MAX_HANDSHAKES;
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
