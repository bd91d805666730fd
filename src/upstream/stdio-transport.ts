import type { ChildProcess } from "node:child_process";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import { McplexError } from "../errors.js";
import { stringifyMessage } from "../protocol/messages.js";
import { LineSplitter, takeOverPipe } from "../protocol/newline-framing.js";
import { readRawAnswer } from "../protocol/raw-json.js";
import { WriteQueue } from "../protocol/write-queue.js";
import { exited, signalGroup } from "./child-processes.js";
import { type StdioServerParams, spawnServer, takeSpawnedAhead } from "./spawn-server.js";
import { StderrTail } from "./stderr-tail.js";
import { queueFull } from "./upstream-errors.js";

export type { StdioServerParams };

/** Options of a {@link StdioClientTransport}. */
export interface StdioTransportOptions {
  /**
   * Deliver an answer whose result no layer reads with that result as a `RawJson` (see
   * `readRawAnswer`), for a consumer that knows them (our `RpcConnection`); an SDK client
   * expects objects, so the default is `false`.
   */
  rawResults?: boolean;
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
  readonly #rawResults: boolean;
  #child: ChildProcess | undefined;
  #closed = false;
  /** Why the child is gone, from its exit until the connection closes. */
  #exited: McplexError | undefined;
  #exit: Promise<void> | undefined;
  #queue: WriteQueue | undefined;

  constructor(params: StdioServerParams, options: StdioTransportOptions = {}) {
    this.#params = params;
    this.#rawResults = options.rawResults === true;
  }

  /** The child's pid once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  async start(): Promise<void> {
    if (this.#child !== undefined) throw new Error("StdioClientTransport already started");
    const { command } = this.#params;
    const server = this.#params.server ?? command;
    // The process `spawnAhead` started for this server, if it did: the same command, spawned
    // the same way, earlier.
    const { child, spawned } = takeSpawnedAhead(this.#params) ?? spawnServer(this.#params);
    this.#child = child;
    this.#exit = exited(child);
    const startFailure = (error: NodeJS.ErrnoException) => {
      const hint =
        error.code === "ENOENT"
          ? `command "${command}" was not found; check the command and PATH`
          : error.code === "EACCES"
            ? `command "${command}" is not executable`
            : undefined;
      return new McplexError(
        "UPSTREAM_START_FAILED",
        `${server}: could not start "${command}": ${hint ?? error.message}`,
        { server, transport: "stdio", ...(hint === undefined ? {} : { hint }) },
        { cause: error },
      );
    };
    try {
      await spawned;
    } catch (error) {
      const failure = startFailure(error as NodeJS.ErrnoException);
      this.#finish(failure);
      throw failure;
    }
    child.on("error", (error) => this.#finish(startFailure(error)));

    const maxLine = this.#params.maxLineBytes ?? 64 * 1024 * 1024;
    const lines = new LineSplitter(
      (line) => this.#onLine(line),
      maxLine,
      () => this.onerror?.(new Error(`message larger than ${maxLine} bytes; dropped`)),
    );
    // Read below the stream Node made for the pipe when it can be (see takeOverPipe).
    const stdout = takeOverPipe(child.stdout!, (buffer, length) => lines.pushBytes(buffer, length));
    if (stdout === undefined)
      child.stdout!.on("data", (chunk: Buffer) => lines.pushBytes(chunk, chunk.length));
    // A failed read ends the output as its end does; the process's own close still reports why.
    else stdout.on("error", () => {});
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
    // A process started ahead may have ended before it was taken.
    if (child.exitCode !== null || child.signalCode !== null)
      this.#exited = ended(child.exitCode, child.signalCode);
    else
      child.once("exit", (code, signal) => {
        this.#exited = ended(code, signal);
      });
    child.once("close", (code, signal) => {
      if (!this.#closed) this.#finish(ended(code, signal));
    });
  }

  #onLine(line: string): void {
    if (this.#rawResults) {
      const answer = readRawAnswer(line);
      if (answer !== undefined) {
        this.onmessage?.(answer as unknown as JSONRPCMessage);
        return;
      }
    }
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
