import { type ChildProcess, spawn } from "node:child_process";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import { McplexError } from "../errors.js";
import { LineSplitter } from "../protocol/newline-framing.js";
import { stringifyMessage } from "../protocol/stringify-message.js";
import { WriteQueue } from "../protocol/write-queue.js";
import { exited, signalGroup, trackChild } from "./child-processes.js";
import { StderrTail } from "./stderr-tail.js";
import { queueFull } from "./upstream-errors.js";

/** What to run. */
export interface StdioServerParams {
  command: string;
  args?: string[];
  /** Added to the inherited safe environment (see {@link defaultEnvironment}). */
  env?: Record<string, string>;
  cwd?: string;
  /** Largest accepted line from the server, in bytes. Default 64 MiB. */
  maxLineBytes?: number;
  /**
   * Bytes that may wait for the server to read its stdin; past that, large messages are
   * refused with a "queue full" error. Default 32 MiB.
   */
  maxQueuedBytes?: number;
  /** Server name for error messages. */
  server?: string;
}

/**
 * Environment variables passed to every child, as the SDK does: enough to find
 * programs and run them, but not the parent's secrets (notably `MCPLEX_SECRET_KEY`).
 */
const INHERITED_ENV = [
  "HOME",
  "LOGNAME",
  "PATH",
  "SHELL",
  "TERM",
  "USER",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TMPDIR",
  "TZ",
  "NODE_EXTRA_CA_CERTS",
  "NODE_OPTIONS",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "XDG_CONFIG_HOME",
  "XDG_CACHE_HOME",
  "XDG_DATA_HOME",
  "npm_config_cache",
];

/** The part of `process.env` a child inherits. */
export function defaultEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of INHERITED_ENV) {
    const value = process.env[key];
    if (value !== undefined && !value.startsWith("()")) env[key] = value;
  }
  return env;
}

/**
 * Newline-delimited JSON-RPC over a child's stdin/stdout, implementing the SDK's
 * `Transport`. Ours rather than the SDK's because it is the hot path: it frames
 * and parses without schema validation (the connection checks what it uses), and
 * it keeps a tail of stderr for error reports.
 */
export class StdioClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  readonly stderr = new StderrTail();
  readonly #params: StdioServerParams;
  #child: ChildProcess | undefined;
  #closed = false;
  /** Why the child is gone, from its exit until the connection closes. */
  #exited: McplexError | undefined;
  #exit: Promise<void> | undefined;
  #queue: WriteQueue | undefined;

  constructor(params: StdioServerParams) {
    this.#params = params;
  }

  /** The child's pid once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  async start(): Promise<void> {
    if (this.#child !== undefined) throw new Error("StdioClientTransport already started");
    const { command, args = [], env = {}, cwd } = this.#params;
    const server = this.#params.server ?? command;
    const child = spawn(command, args, {
      env: { ...defaultEnvironment(), ...env },
      cwd,
      stdio: ["pipe", "pipe", "pipe"],
      windowsHide: true,
      // A process group of its own, so that stopping it stops what it started too. A
      // Ctrl-C in the terminal then reaches mcplex alone, which stops the groups itself.
      detached: process.platform !== "win32",
    });
    this.#child = child;
    trackChild(child);
    this.#exit = exited(child);

    await new Promise<void>((resolve, reject) => {
      child.once("spawn", () => resolve());
      child.once("error", (error: NodeJS.ErrnoException) => {
        const hint =
          error.code === "ENOENT"
            ? `command "${command}" was not found; check the command and PATH`
            : error.code === "EACCES"
              ? `command "${command}" is not executable`
              : undefined;
        const failure = new McplexError(
          "UPSTREAM_START_FAILED",
          `${server}: could not start "${command}": ${hint ?? error.message}`,
          { server, transport: "stdio", ...(hint === undefined ? {} : { hint }) },
          { cause: error },
        );
        reject(failure);
        this.#finish(failure);
      });
    });

    const maxLine = this.#params.maxLineBytes ?? 64 * 1024 * 1024;
    child.stdout!.setEncoding("utf8");
    const lines = new LineSplitter(
      (line) => this.#onLine(line),
      maxLine,
      () => this.onerror?.(new Error(`message larger than ${maxLine} bytes; dropped`)),
    );
    child.stdout!.on("data", (chunk: string) => lines.push(chunk));
    this.#queue = new WriteQueue(
      child.stdin!,
      this.#params.maxQueuedBytes === undefined ? {} : { maxQueuedBytes: this.#params.maxQueuedBytes },
    );
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => this.stderr.push(chunk));
    child.stdin!.on("error", (error) => this.onerror?.(error));
    const ended = (code: number | null, signal: NodeJS.Signals | null) =>
      new McplexError(
        "UPSTREAM_CLOSED",
        `${server}: process ${signal !== null ? `was killed by ${signal}` : `exited with code ${code}`}`,
        { server, transport: "stdio", retryable: true },
      );
    // The connection ends at "close", once the pipes are drained (the stderr tail is then
    // whole); between "exit" and then, what is sent fails with the reason, not "not connected".
    child.once("exit", (code, signal) => {
      this.#exited = ended(code, signal);
    });
    child.once("close", (code, signal) => {
      if (!this.#closed) this.#finish(ended(code, signal));
    });
  }

  #onLine(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      // Servers that print logs to stdout: keep them as stderr so they show in error reports.
      this.stderr.push(`${line}\n`);
      return;
    }
    if (
      typeof message === "object" &&
      message !== null &&
      (message as { jsonrpc?: unknown }).jsonrpc === "2.0"
    ) {
      this.onmessage?.(message as JSONRPCMessage);
    } else {
      this.stderr.push(`${line}\n`);
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (this.#exited !== undefined && !this.#closed) return Promise.reject(this.#exited);
    if (stdin == null || this.#closed || !stdin.writable) {
      return Promise.reject(new Error("not connected"));
    }
    const queue = this.#queue!;
    const text = stringifyMessage(message);
    if (!queue.push(text)) {
      const server = this.#params.server ?? this.#params.command;
      return Promise.reject(queueFull(server, "stdio", queue.backlog, text.length, queue.limit));
    }
    return Promise.resolve();
  }

  /**
   * Stops the child in stages: end stdin, then SIGTERM, then SIGKILL (to its process
   * group), each after a grace period. Safe to call twice.
   */
  async close(graceMs = 2000): Promise<void> {
    const child = this.#child;
    if (child === undefined) {
      this.#finish();
      return;
    }
    const alreadyClosed = this.#closed;
    this.#closed = true;
    if (child.exitCode === null && child.signalCode === null) {
      child.stdin?.end();
      const exited = this.#exit!;
      if (!(await waitFor(exited, graceMs))) {
        signalGroup(child, "SIGTERM");
        if (!(await waitFor(exited, graceMs))) {
          signalGroup(child, "SIGKILL");
          await exited;
        }
      }
    }
    if (!alreadyClosed) this.onclose?.();
  }

  #finish(error?: Error): void {
    if (this.#closed) return;
    this.#closed = true;
    if (error !== undefined) this.onerror?.(error);
    this.onclose?.();
  }
}

async function waitFor(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  const result = await Promise.race([promise.then(() => true as const), timeout]);
  clearTimeout(timer);
  return result;
}
