import { connect, createServer } from "node:net";

/**
 * A TCP port free on 127.0.0.1 now, for servers that cannot be told `port 0` and then asked
 * (redis-server, nginx). Another process may take it before it is used: callers retry.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Resolves once something accepts TCP connections on 127.0.0.1:`port`, by connecting (each
 * refused attempt is followed by the next as soon as it fails, paced by `interval`); rejects when
 * `gone()` says the process died, or after `ms`.
 */
export async function waitForListener(
  port: number,
  gone: () => string | undefined,
  ms = 15_000,
  interval = 20,
): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const why = gone();
    if (why !== undefined) throw new Error(why);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, interval));
  }
}
