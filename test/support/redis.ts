/**
 * A real redis-server (Debian's, installed by scripts/ensure-redis.mjs) for tests: on a free
 * loopback port, in a temp directory, no persistence. It can be SIGKILLed and started again on
 * the same port, as a Redis outage looks to its clients.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, waitForListener } from "./free-port.js";

/** Where the tests find redis-server. */
export const REDIS_SERVER = process.env.REDIS_SERVER_PATH ?? "/usr/bin/redis-server";

/** A running redis-server. */
export interface RedisProcess {
  readonly port: number;
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  readonly child: ChildProcess;
  /** SIGKILLs it (an outage) and waits for the exit. */
  kill(): Promise<void>;
  /** Starts it again on the same port, after {@link kill}; resolves when it answers PING. */
  restart(): Promise<void>;
  /** Stops it for good and removes its directory; safe to call twice. */
  stop(): Promise<void>;
}

/** Starts redis-server on a free 127.0.0.1 port; resolves when it answers PING. */
export async function startRedis(): Promise<RedisProcess> {
  const dir = mkdtempSync(join(tmpdir(), "mcplex-redis-"));
  let port = 0;
  let child: ChildProcess | undefined;
  // A port found free may be taken before redis binds it: try another.
  for (let attempt = 0; child === undefined; attempt++) {
    port = await freePort();
    try {
      child = await launch(dir, port);
    } catch (error) {
      if (attempt >= 4) throw error;
    }
  }
  let current: ChildProcess = child;
  const exited = (c: ChildProcess) =>
    c.exitCode !== null || c.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((r) => c.once("exit", () => r()));
  let stopped = false;
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get child() {
      return current;
    },
    async kill() {
      current.kill("SIGKILL");
      await exited(current);
    },
    async restart() {
      current = await launch(dir, port);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      current.kill("SIGKILL");
      await exited(current);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function launch(dir: string, port: number): Promise<ChildProcess> {
  const child = spawn(
    REDIS_SERVER,
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
    { cwd: dir, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    output = (output + chunk).slice(-4000);
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    output = (output + chunk).slice(-4000);
  });
  const gone = () =>
    child.exitCode !== null || child.signalCode !== null
      ? `redis-server exited before serving:\n${output}`
      : undefined;
  try {
    await waitForListener(port, gone);
    await ping(port);
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  return child;
}

/** Resolves when redis on `port` answers PING with PONG (not LOADING). */
async function ping(port: number): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1");
      let data = "";
      socket.setEncoding("utf8");
      socket.once("connect", () => socket.write("PING\r\n"));
      socket.on("data", (chunk: string) => {
        data += chunk;
        if (data.includes("\r\n")) {
          socket.destroy();
          resolve(data);
        }
      });
      socket.once("error", reject);
    });
    if (reply.startsWith("+PONG")) return;
    if (attempt > 200) throw new Error(`redis-server on port ${port} answers ${reply.trim()}`);
  }
}
