import type { Server } from "node:http";
import type { Socket } from "node:net";

/** Counts open things (requests, WebSockets) and tells when none is left. */
export class OpenCount {
  #open = 0;
  readonly #waiters: Array<() => void> = [];

  get open(): number {
    return this.#open;
  }

  /** Counts `closable` as open until it emits `close`. */
  track(closable: { once(event: "close", listener: () => void): unknown }): void {
    this.#open++;
    closable.once("close", () => {
      if (--this.#open > 0) return;
      for (const resolve of this.#waiters.splice(0)) resolve();
    });
  }

  /** Resolves when nothing is open (at once if nothing is). */
  idle(): Promise<void> {
    return this.#open === 0 ? Promise.resolve() : new Promise((resolve) => this.#waiters.push(resolve));
  }
}

/** The live sockets of `server`, to destroy on close (keep-alive ones would hold it open). */
export function socketsOf(server: Server): Set<Socket> {
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  return sockets;
}
