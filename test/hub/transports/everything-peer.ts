/**
 * `@modelcontextprotocol/server-everything` as a peer of the transport contract: its calls, and
 * starting it over HTTP (`streamableHttp` or `sse`) on a free port, ready once it says it listens.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { within } from "../../support/wait.js";
import type { TransportContract } from "./transport-contract.case.js";

export const EVERYTHING_BIN = join(import.meta.dirname, "../../../node_modules/.bin/mcp-server-everything");

/** What server-everything answers, on any transport. */
export const EVERYTHING_CALLS: Pick<
  TransportContract,
  "echo" | "toolError" | "slow" | "resource" | "prompt"
> = {
  echo: { tool: "echo", args: (tag) => ({ message: tag }), text: (tag) => `Echo: ${tag}` },
  // Arguments that fail its input schema come back as a tool error (SDK v1 McpServer).
  toolError: { tool: "get-sum", args: { a: "one", b: 2 } },
  slow: {
    tool: "trigger-long-running-operation",
    args: (ms, step) => ({ duration: ms / 1000, steps: Math.max(1, Math.round(ms / step)) }),
  },
  resource: { uri: "demo://resource/static/document/architecture.md", text: /\S/ },
  prompt: { name: "simple-prompt", args: {}, text: "This is a simple prompt without arguments." },
};

export interface EverythingHttp {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  child: ChildProcess;
  /** Everything it wrote so far, stdout and stderr interleaved (it logs sessions to both). */
  readonly output: string;
  /** Resolves once the output matches `pattern` (at once if it already does). */
  outputMatches(pattern: RegExp): Promise<void>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Starts `mcp-server-everything <mode>` with `PORT` set to a free port. The port is found by
 * binding port 0 and letting it go, so another process may take it first: then the server
 * exits and the start is tried again with another port.
 */
export async function startEverythingHttp(mode: "streamableHttp" | "sse"): Promise<EverythingHttp> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(mode, await freePort());
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

async function startOnce(mode: "streamableHttp" | "sse", port: number): Promise<EverythingHttp> {
  const child = spawn(EVERYTHING_BIN, [mode], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const watchers = new Set<{ pattern: RegExp; resolve: () => void }>();
  const onData = (chunk: string) => {
    output += chunk;
    for (const watcher of watchers) {
      if (!watcher.pattern.test(output)) continue;
      watchers.delete(watcher);
      watcher.resolve();
    }
  };
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.setEncoding("utf8");
    stream.on("data", onData);
  }
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const outputMatches = (pattern: RegExp) =>
    pattern.test(output)
      ? Promise.resolve()
      : new Promise<void>((resolve) => watchers.add({ pattern, resolve }));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  const listening = mode === "sse" ? /Server is running on port/ : /listening on port/;
  const ready = Promise.race([
    outputMatches(listening),
    exited.then(() => {
      throw new Error(`mcp-server-everything ${mode} exited before listening:\n${output}`);
    }),
  ]);
  try {
    await within(ready, 20_000, `mcp-server-everything ${mode} to listen`);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    origin: `http://127.0.0.1:${port}`,
    child,
    get output() {
      return output;
    },
    outputMatches,
    stop,
  };
}
