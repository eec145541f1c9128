import http from 'node:http';
import type { Socket } from 'node:net';

/** How long a closing connection goes on reading (and discarding) what the sender still writes. */
export const LINGER_MS = 2000;

/**
 * A lingering close (RFC 9112 §9.6; nginx's `lingering_close`). The gateway answers some requests before reading
 * their body (a 401, a 415, a 413 for a declared size) with `Connection: close`. Closing a socket whose sender is
 * still writing makes the kernel answer the next bytes with a RST, and a RST can make the sender's kernel drop
 * the answer it had not read yet: the client sees "connection reset" instead of the 401 or 415 that says what to
 * do. So a connection Node closes after its last response (`destroySoon`, also used by chunk-limit.ts) first
 * sends its FIN after the response, then goes on reading for at most LINGER_MS, discarding what arrives (Node's
 * parser dumps an unread body), and is destroyed when the sender closes its side or the time is up. The bound
 * keeps a sender that never stops from holding the connection.
 */
export function lingerBeforeClose(server: http.Server, lingerMs = LINGER_MS): void {
  server.on('connection', (socket: Socket) => {
    socket.destroySoon = () => lingeringClose(socket, lingerMs);
  });
}

function lingeringClose(socket: Socket, lingerMs: number): void {
  if (socket.destroyed) return;
  // http.Server sockets are half-open capable: end() sends FIN once the response is written and keeps reading.
  if (!socket.writableEnded) socket.end();
  const timer = setTimeout(() => socket.destroy(), lingerMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  // The sender's FIN: nothing more to read, so nothing left to reset.
  socket.once('end', () => socket.destroy());
  socket.resume();
}
