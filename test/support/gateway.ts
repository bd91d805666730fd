/**
 * Starting the gateway for tests — as `mcplex serve` (the built CLI, a real child process) or in
 * process (`Gateway` + `startHttpFront`) — on port 0, and raw HTTP helpers for the cases the SDK
 * client cannot produce (any Host header, broken bodies, 2026 requests written by hand).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { request } from "node:http";
import { resolve } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { McplexConfig } from "../../src/config/types.js";
import { dashboardPage } from "../../src/dashboard/dashboard.js";
import { type HttpFront, type HttpFrontOptions, startHttpFront } from "../../src/fronts/http-front.js";
import { Gateway, type GatewayOptions } from "../../src/gateway/gateway.js";
import { Hub } from "../../src/hub/hub.js";
import { ANSWERING_CAPABILITIES } from "../../src/protocol/server-requests.js";
import { CLI } from "./cli.js";

/** Absolute commands of the real upstreams, for config files the CLI reads. */
export const COMMANDS = {
  fixture: {
    command: resolve("node_modules/.bin/tsx"),
    args: [resolve("test/fixtures/servers/fixture-server.ts")],
  },
  legacyFixture: {
    command: resolve("node_modules/.bin/tsx"),
    args: [resolve("test/fixtures/servers/fixture-server.ts"), "--legacy-only"],
  },
  /** A 2026 server of the tasks extension with the tools of the conformance suite's `tasks-*`. */
  tasks: {
    command: resolve("node_modules/.bin/tsx"),
    args: [resolve("test/fixtures/servers/tasks-server.ts")],
  },
  everything: { command: resolve("node_modules/.bin/mcp-server-everything"), args: ["stdio"] },
  memory: { command: resolve("node_modules/.bin/mcp-server-memory"), args: [] as string[] },
};

/** One server of a YAML config written by {@link yamlConfig}. */
export interface YamlServer {
  command: string;
  args?: string[];
  env?: Record<string, string>;
}

/**
 * Tests read a gateway's lists right after it starts, and on a loaded machine a fixture can take
 * longer than the default `readyWait` (1 s) to start: they wait for every server as the gateway
 * did before `readyWait` existed. test/gateway/ready-wait.test.ts tests the wait itself.
 */
const WAIT_FOR_EVERY_SERVER = "1m";

/**
 * An mcplex.yaml text with these servers (plus any extra top-level YAML, e.g. `tokens:`), whose
 * gateway waits for every server before answering (see {@link WAIT_FOR_EVERY_SERVER}).
 */
export function yamlConfig(servers: Record<string, YamlServer>, extra = ""): string {
  const lines = extra.includes("serve:") ? [] : ["serve:", `  readyWait: ${WAIT_FOR_EVERY_SERVER}`];
  lines.push("servers:");
  for (const [name, server] of Object.entries(servers)) {
    lines.push(`  ${name}:`, `    command: ${JSON.stringify(server.command)}`);
    lines.push(`    args: ${JSON.stringify(server.args ?? [])}`);
    if (server.env !== undefined) {
      lines.push("    env:");
      for (const [key, value] of Object.entries(server.env))
        lines.push(`      ${key}: ${JSON.stringify(value)}`);
    }
  }
  return `${lines.join("\n")}\n${extra}`;
}

/** A running `mcplex serve --http`. */
export interface ServeProcess {
  /** `http://127.0.0.1:<port>/mcp` as the CLI printed it. */
  readonly url: string;
  /** `ws://127.0.0.1:<port>/ws`. */
  readonly wsUrl: string;
  /** `http://127.0.0.1:<port>`, for /healthz, /readyz, /metrics. */
  readonly origin: string;
  readonly child: ChildProcess;
  /** Everything the process wrote to stderr so far. */
  stderr(): string;
  /** Settles when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` (default SIGTERM) and waits for the exit; safe to call twice. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Spawns `mcplex serve --http --port 0 <args>` and resolves once it has printed its endpoint
 * (after every upstream has started or failed, unless `args` set a shorter `--ready-wait`).
 * Rejects if it exits first. `bin` runs another `mcplex` executable (an installed one) instead
 * of the build's `dist/cli/main.js`.
 */
export function serveHttp(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string; startMs?: number; bin?: string } = {},
): Promise<ServeProcess> {
  const wait = args.includes("--ready-wait") ? [] : ["--ready-wait", WAIT_FOR_EVERY_SERVER];
  const [command, ...prefix] = options.bin === undefined ? [process.execPath, CLI] : [options.bin];
  const child = spawn(command!, [...prefix, "serve", "--http", "--port", "0", ...wait, ...args], {
    env: { ...process.env, ...options.env },
    cwd: options.cwd ?? process.cwd(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once("exit", (code, signal) => done({ code, signal })),
  );
  return new Promise((resolveStart, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(`mcplex serve printed no endpoint within ${options.startMs ?? 30_000} ms:\n${stderr}`),
      );
    }, options.startMs ?? 30_000);
    const onExit = () => {
      clearTimeout(timer);
      reject(new Error(`mcplex serve exited before serving:\n${stderr}`));
    };
    child.once("exit", onExit);
    child.stdout?.resume();
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      const url = /Streamable HTTP\s+(http:\/\/\S+\/mcp)/.exec(stderr)?.[1];
      // The whole banner is one write; wait for its last line.
      if (url === undefined || !stderr.includes("Ctrl-C stops it.")) return;
      clearTimeout(timer);
      child.off("exit", onExit);
      const origin = url.replace(/\/mcp$/, "");
      let stopping: ReturnType<ServeProcess["stop"]> | undefined;
      resolveStart({
        url,
        wsUrl: `${origin.replace(/^http/, "ws")}/ws`,
        origin,
        child,
        stderr: () => stderr,
        exited,
        stop(signal = "SIGTERM") {
          stopping ??= (async () => {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            const kill = setTimeout(() => child.kill("SIGKILL"), 10_000);
            try {
              return await exited;
            } finally {
              clearTimeout(kill);
            }
          })();
          return stopping;
        },
      });
    });
  });
}

/** A gateway served in this process. */
export interface InProcessGateway {
  readonly url: string;
  readonly wsUrl: string;
  readonly origin: string;
  readonly hub: Hub;
  readonly gateway: Gateway;
  readonly front: HttpFront;
  /** Another HTTP front on the same gateway (e.g. with other limits); closed by {@link stop}. */
  addFront(options: HttpFrontOptions): Promise<HttpFront>;
  stop(): Promise<void>;
}

/**
 * Starts a hub on `config`, a gateway over it and an HTTP front on 127.0.0.1:0, as
 * `mcplex serve --http` wires them, and resolves when every upstream has started or failed.
 */
export async function startGateway(
  config: McplexConfig,
  options: HttpFrontOptions = {},
  gatewayOptions: GatewayOptions = {},
): Promise<InProcessGateway> {
  const hub = new Hub({ config, clientCapabilities: ANSWERING_CAPABILITIES });
  const starting = hub.start();
  const gateway = new Gateway(hub, { ready: starting, ...gatewayOptions });
  const fronts: HttpFront[] = [];
  const open = async (o: HttpFrontOptions) => {
    // With its dashboard, as `mcplex serve` wires it (`dashboard: false` leaves it out).
    const front = await startHttpFront(gateway, {
      host: "127.0.0.1",
      port: 0,
      dashboard: dashboardPage,
      ...o,
    });
    fronts.push(front);
    return front;
  };
  const front = await open({ ...options, tokens: options.tokens ?? config.tokens });
  await starting;
  return {
    url: front.url,
    wsUrl: front.wsUrl,
    origin: front.url.replace(/\/mcp$/, ""),
    hub,
    gateway,
    front,
    addFront: open,
    async stop() {
      await Promise.all(fronts.map((f) => f.close()));
      gateway.close();
      await hub.close();
    },
  };
}

/** The 2026 revision the gateway serves statelessly. */
export const REV2026 = "2026-07-28";

/** A 2026 per-request envelope (`params._meta`). */
export function envelope(capabilities: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    "io.modelcontextprotocol/protocolVersion": REV2026,
    "io.modelcontextprotocol/clientCapabilities": capabilities,
    "io.modelcontextprotocol/clientInfo": { name: "gateway-test", version: "1.0.0" },
  };
}

/** A 2026 request: `params` with the envelope merged into `_meta`. */
export function rev2026Request(
  id: string | number,
  method: string,
  params: Record<string, unknown> = {},
  capabilities: Record<string, unknown> = {},
): { jsonrpc: "2.0"; id: string | number; method: string; params: Record<string, unknown> } {
  const meta = { ...envelope(capabilities), ...(params._meta as Record<string, unknown> | undefined) };
  return { jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } };
}

/** The headers a 2026 client sends with `message` (Mcp-Method, Mcp-Name, version). */
export function rev2026Headers(message: {
  method: string;
  params?: Record<string, unknown>;
}): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": REV2026,
    "mcp-method": message.method,
  };
  const name = message.params?.name ?? message.params?.uri;
  if (typeof name === "string") headers["mcp-name"] = name;
  return headers;
}

/** An HTTP answer with its body read. */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The body as JSON, or `undefined` when it is not JSON. */
  json: unknown;
}

/**
 * One HTTP request with `node:http` (which, unlike fetch, sends any Host header as given).
 * `body` is sent as it is: a string, raw bytes, or an object as JSON. A request that gets no
 * answer fails after `timeoutMs` (socket inactivity), so a hanging gateway fails the test fast.
 */
export function rawHttp(
  url: string,
  options: {
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer | object;
    /** Reject when no complete answer came within this many ms (default 10 000). */
    timeoutMs?: number;
  } = {},
): Promise<RawResponse> {
  const body =
    options.body === undefined || typeof options.body === "string" || Buffer.isBuffer(options.body)
      ? options.body
      : JSON.stringify(options.body);
  return new Promise((done, fail) => {
    const req = request(url, { method: options.method ?? "POST", headers: options.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", fail);
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        done({ status: res.statusCode ?? 0, headers: res.headers, body: text, json });
      });
    });
    req.on("error", fail);
    req.setTimeout(options.timeoutMs ?? 10_000, () =>
      req.destroy(new Error(`no answer within ${options.timeoutMs ?? 10_000} ms`)),
    );
    req.end(body);
  });
}

/** POSTs a 2026 request with the headers it needs (plus `headers`); answers JSON or the last SSE message. */
export async function postRev2026(
  url: string,
  message: { jsonrpc: "2.0"; id: string | number; method: string; params: Record<string, unknown> },
  headers: Record<string, string> = {},
): Promise<RawResponse & { messages: unknown[] }> {
  const res = await rawHttp(url, { headers: { ...rev2026Headers(message), ...headers }, body: message });
  const messages = String(res.headers["content-type"]).startsWith("text/event-stream")
    ? sseMessages(res.body)
    : [res.json];
  return { ...res, json: messages.at(-1), messages };
}

/**
 * A 2026 `fx__slow` call (the fixture's tool) that runs a minute unless the client gives up:
 * `giveUp()` drops the connection, which cancels it, and `answer` then rejects.
 */
export function slowCallUntilAborted(url: string, id: number): { answer: Promise<string>; giveUp(): void } {
  const abort = new AbortController();
  const message = rev2026Request(id, "tools/call", { name: "fx__slow", arguments: { ms: 60_000, step: 50 } });
  const answer = fetch(url, {
    method: "POST",
    headers: rev2026Headers(message),
    body: JSON.stringify(message),
    signal: abort.signal,
  }).then((res) => res.text());
  return { answer, giveUp: () => abort.abort() };
}

/** The JSON messages of an SSE body (`data:` lines, one message per event). */
export function sseMessages(body: string): unknown[] {
  return body
    .split(/\r?\n\r?\n/)
    .map((event) =>
      event
        .split(/\r?\n/)
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trimStart())
        .join("\n"),
    )
    .filter((data) => data !== "")
    .map((data) => JSON.parse(data) as unknown);
}

/** The text of a tool result's content blocks. */
export function resultText(result: unknown): string {
  return ((result as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? "").join("");
}

/**
 * Retries `attempt` every `intervalMs` until it returns a value other than `undefined`, or
 * throws after `ms`. For conditions no client can observe as an event (an upstream coming back
 * after its reconnect backoff).
 */
export async function eventually<T>(
  attempt: () => Promise<T | undefined>,
  options: { ms?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (options.ms ?? 15_000);
  let last: unknown;
  for (;;) {
    try {
      const value = await attempt();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`${options.what ?? "condition"} not met within ${options.ms ?? 15_000} ms`, {
        cause: last,
      });
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 100));
  }
}

/**
 * An SDK v2 client connected to the gateway at `url` over Streamable HTTP, with `token` as its
 * bearer token; `mode: "legacy"` (the default) speaks 2025 with a session, `"auto"` 2026.
 */
export async function connectHttp(
  url: string,
  options: { token?: string; mode?: "legacy" | "auto"; name?: string } = {},
): Promise<Client> {
  const client = new Client(
    { name: options.name ?? "gateway-test", version: "1.0.0" },
    { versionNegotiation: { mode: options.mode ?? "legacy" } },
  );
  const headers: Record<string, string> =
    options.token === undefined ? {} : { authorization: `Bearer ${options.token}` };
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}
