/**
 * One script in one fresh QuickJS runtime: host functions in, tool calls out, limits enforced,
 * and everything disposed when it ends, however it ends.
 *
 * QuickJS runs only inside `enter()`, synchronously: the script's code up to its first await,
 * then its pending jobs each time a tool call answers (`pump()`). Between those the sandbox is
 * idle, so a timeout or a cancellation can dispose it at once; inside them they only mark the
 * run, and the interrupt handler stops the script at its next check.
 */
import type { CallToolResult } from "@modelcontextprotocol/client";
import type {
  QuickJSContext,
  QuickJSDeferredPromise,
  QuickJSHandle,
  QuickJSRuntime,
  QuickJSWASMModule,
} from "quickjs-emscripten-core";
import { CodeModeError } from "./code-mode-error.js";
import type { CodeLimits } from "./limits.js";
import type { PreparedScript } from "./prepare-script.js";
import { memoryExhausted, poisonModule } from "./quickjs-module.js";
import {
  cancelledError,
  limitError,
  type RunFacts,
  sandboxFailure,
  scriptError,
  stalledError,
} from "./run-errors.js";
import { PRELUDE } from "./sandbox-prelude.js";
import type { ToolBinding } from "./tool-bindings.js";
import { type ToolOutcome, toolOutcome } from "./tool-value.js";

/** What a run that ended with a value gives back. */
export interface RunCodeResult {
  /** The script's value (a top-level `return`, or its last expression), through JSON; `undefined` when none. */
  value: unknown;
  /** What the script wrote with `console.*`, one entry per call; `warn`/`error`/`debug`/`info` lines are prefixed `[warn] ` etc. */
  logs: string[];
  /** The logs, then the value as JSON on the last line when there is one: the text to give a model. */
  output: string;
  /** Tool calls the script started. */
  toolCalls: number;
}

/** The host's call of a tool by its exposed name; the signal aborts when the run ends or is cancelled. */
export type CallTool = (
  exposed: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
) => Promise<CallToolResult>;

export interface SandboxRunOptions {
  module: QuickJSWASMModule;
  script: PreparedScript;
  bindings: readonly ToolBinding[];
  callTool: CallTool;
  limits: CodeLimits;
  signal: AbortSignal | undefined;
  /** Each console line as it is written (the worker passes them on, for a run it may have to kill). */
  onLog?: (line: string) => void;
}

/** Longest error text taken from a tool or a thrown value. */
const MAX_MESSAGE = 8 * 1024;

/** How a run ends: an error, or what the runner reported. */
type End = CodeModeError | { value: unknown } | { error: CodeModeError };
const clip = (text: string) => (text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}...` : text);

export class SandboxRun {
  readonly result: Promise<RunCodeResult>;
  private resolve!: (result: RunCodeResult) => void;
  private reject!: (error: CodeModeError) => void;
  private readonly options: SandboxRunOptions;
  private readonly runtime: QuickJSRuntime;
  private readonly context: QuickJSContext;
  private readonly byExposed = new Map<string, ToolBinding>();
  /** Aborts the signal every tool call got: on the end of the run, whatever ended it. */
  private readonly calls = new AbortController();
  private readonly stop: AbortSignal;
  /** Aborts `stop` at `limits.wallMs`: a timer, which the event loop holds (see the constructor). */
  private readonly wall = new AbortController();
  private readonly wallTimer: NodeJS.Timeout;
  private readonly deferreds = new Set<QuickJSDeferredPromise>();
  private readonly waiting: Array<() => void> = [];
  private readonly logs: string[] = [];
  private readonly deadline: number;
  private outputBytes = 0;
  private toolCalls = 0;
  private active = 0;
  private unsettled = 0;
  private depth = 0;
  private done = false;
  /** The host's stack ran out or WebAssembly trapped: the instance may be inconsistent, never call into it again. */
  private poisoned = false;
  /** Set inside the sandbox's callbacks; the run ends with it once QuickJS returns. */
  private fatal: CodeModeError | undefined;
  private outcome: { value: unknown } | { error: CodeModeError } | undefined;
  private main: QuickJSHandle | undefined;

  constructor(options: SandboxRunOptions) {
    this.options = options;
    this.result = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    for (const binding of options.bindings) this.byExposed.set(binding.tool.exposed, binding);
    const { limits } = options;
    this.deadline = performance.now() + limits.wallMs;
    // Not `AbortSignal.timeout` inside `AbortSignal.any`: Node holds a timeout signal only while it
    // has listeners of its own and `any` watches it weakly, so a full collection of the heap took
    // the wall-clock limit away (src/protocol/deadline-signal.ts, which code mode does not import).
    this.wallTimer = setTimeout(() => this.wall.abort(), limits.wallMs);
    this.wallTimer.unref();
    this.stop = options.signal ? AbortSignal.any([options.signal, this.wall.signal]) : this.wall.signal;
    this.runtime = options.module.newRuntime();
    this.runtime.setMemoryLimit(limits.memoryBytes);
    this.runtime.setMaxStackSize(limits.stackBytes);
    this.runtime.setInterruptHandler(
      () => this.done || this.fatal !== undefined || this.stop.aborted || performance.now() > this.deadline,
    );
    this.context = this.runtime.newContext();
  }

  /** What the run did so far, for errors. */
  private facts(): RunFacts {
    return {
      limits: this.options.limits,
      logs: this.logs,
      toolCalls: this.toolCalls,
      script: this.options.script,
      memoryExhausted: () => memoryExhausted(this.options.module, this.options.limits.memoryBytes),
    };
  }

  /** Sets up the prelude, starts the script and runs it to its first await. */
  start(): Promise<RunCodeResult> {
    this.stop.addEventListener("abort", this.onStop);
    if (this.stop.aborted) this.finish(this.stopError());
    else {
      this.enter(() => this.boot());
      this.pump();
    }
    return this.result;
  }

  private boot(): void {
    const ctx = this.context;
    const prelude = ctx.evalCode(PRELUDE, "mcplex-prelude.js");
    if (prelude.error) {
      const error = ctx.dump(prelude.error);
      prelude.error.dispose();
      throw new Error(`the code-mode prelude failed: ${JSON.stringify(error)}`);
    }
    const args = [
      ctx.newFunction("hostCall", (name, args) => this.hostCall(name, args)),
      ctx.newFunction("hostLog", (level, text) => this.hostLog(level, text)),
      ctx.newFunction("hostDone", (json) => this.hostDone(json)),
      ctx.newFunction("hostFail", (description) => this.hostFail(description)),
      ctx.newString(
        JSON.stringify(this.options.bindings.map((b) => [b.namespace, b.method, b.tool.exposed])),
      ),
    ];
    const runner = ctx.callFunction(prelude.value, ctx.undefined, ...args);
    prelude.value.dispose();
    for (const handle of args) handle.dispose();
    if (runner.error) {
      const error = ctx.dump(runner.error);
      runner.error.dispose();
      throw new Error(`the code-mode prelude failed: ${JSON.stringify(error)}`);
    }
    const main = ctx.evalCode(this.options.script.source, "script.js");
    if (main.error) {
      const error = ctx.dump(main.error) as {
        name?: string;
        message?: string;
        lineNumber?: number;
        stack?: string;
      };
      main.error.dispose();
      runner.value.dispose();
      this.fatal ??= scriptError(
        this.facts(),
        error.name ?? "SyntaxError",
        String(error.message),
        String(error.stack ?? ""),
        true,
      );
      return;
    }
    const running = ctx.callFunction(runner.value, ctx.undefined, main.value);
    runner.value.dispose();
    main.value.dispose();
    if (running.error) {
      running.error.dispose();
      return;
    }
    this.main = running.value;
  }

  /** Runs QuickJS code; a throw of the host itself (its stack, a WebAssembly trap) ends the run and retires the module. */
  private enter(work: () => void): void {
    this.depth++;
    try {
      work();
    } catch (error) {
      // A WebAssembly trap is a RuntimeError (this lib setting has no WebAssembly types).
      if (error instanceof RangeError || (error instanceof Error && error.name === "RuntimeError")) {
        this.poisoned = true;
        poisonModule(this.options.module);
      }
      this.fatal ??= sandboxFailure(this.facts(), error);
    } finally {
      this.depth--;
    }
  }

  /** Runs the sandbox's pending jobs, then ends the run if it has ended. */
  private pump(): void {
    if (this.done) return;
    this.enter(() => {
      const jobs = this.runtime.executePendingJobs();
      if (jobs.error) jobs.error.dispose();
    });
    const end = this.ended();
    if (end !== undefined) this.finish(end);
  }

  /** How the run ends now, if it does. */
  private ended(): End | undefined {
    if (this.fatal !== undefined) return this.fatal;
    if (this.stop.aborted || performance.now() > this.deadline) return this.stopError();
    if (this.outcome !== undefined) return this.outcome;
    if (this.main === undefined) return stalledError(this.facts(), "the script could not start");
    let rejected: { name?: string; message?: string; stack?: string } | undefined;
    let settled = false;
    this.enter(() => {
      const state = this.context.getPromiseState(this.main!);
      if (state.type === "pending") return;
      settled = true;
      if (state.type === "rejected") {
        rejected = this.context.dump(state.error);
        state.error.dispose();
      } else state.value.dispose();
    });
    if (this.fatal !== undefined) return this.fatal;
    if (settled) {
      const { name = "Error", message = "the script ended without a result", stack = "" } = rejected ?? {};
      return scriptError(this.facts(), String(name), String(message), String(stack));
    }
    if (this.unsettled === 0 && !this.runtime.hasPendingJob()) return stalledError(this.facts());
    return undefined;
  }

  /** The error of a run stopped by its caller's signal or its time limit. */
  private stopError(): CodeModeError {
    return this.options.signal?.aborted
      ? cancelledError(this.facts(), this.options.signal.reason)
      : limitError("wallMs", this.facts());
  }

  private readonly onStop = (): void => {
    if (this.depth > 0) this.fatal ??= this.stopError();
    else this.finish(this.stopError());
  };

  private finish(end: End): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.wallTimer);
    this.stop.removeEventListener("abort", this.onStop);
    this.waiting.length = 0;
    const error = end instanceof CodeModeError ? end : "error" in end ? end.error : undefined;
    this.calls.abort(error ?? new CodeModeError("CODE_ERROR", "the script has ended"));
    // A poisoned instance is left to the garbage collector: freeing into it could abort.
    if (!this.poisoned) this.dispose();
    if (error !== undefined) {
      this.reject(error);
      return;
    }
    const value = (end as { value: unknown }).value;
    const output = value === undefined ? this.logs : [...this.logs, JSON.stringify(value)];
    this.resolve({ value, logs: this.logs, output: output.join("\n"), toolCalls: this.toolCalls });
  }

  private dispose(): void {
    try {
      for (const deferred of this.deferreds) deferred.dispose();
      this.deferreds.clear();
      this.main?.dispose();
      this.context.dispose();
      this.runtime.dispose();
    } catch {
      poisonModule(this.options.module);
    }
  }

  private hostCall(nameHandle: QuickJSHandle, argsHandle: QuickJSHandle): QuickJSHandle {
    const ctx = this.context;
    const name = ctx.typeof(nameHandle) === "string" ? ctx.getString(nameHandle) : "";
    // A run already ending (a limit reached inside a callback) starts nothing more.
    if (this.fatal !== undefined) throw this.fatal;
    const binding = this.byExposed.get(name);
    if (binding === undefined) throw new TypeError(`there is no tool "${clip(name)}"`);
    if (this.toolCalls >= this.options.limits.maxToolCalls) {
      this.fatal ??= limitError("maxToolCalls", this.facts());
      throw this.fatal;
    }
    let args: unknown;
    try {
      args = JSON.parse(ctx.typeof(argsHandle) === "string" ? ctx.getString(argsHandle) : "");
    } catch {
      args = undefined;
    }
    if (args === null || typeof args !== "object" || Array.isArray(args))
      throw new TypeError(`tools.${binding.namespace}.${binding.method} takes one object of arguments`);
    this.toolCalls++;
    this.unsettled++;
    const deferred = ctx.newPromise();
    this.deferreds.add(deferred);
    const call = () => {
      this.active++;
      let pending: Promise<CallToolResult>;
      try {
        pending = Promise.resolve(
          this.options.callTool(binding.tool.exposed, args as Record<string, unknown>, this.calls.signal),
        );
      } catch (error) {
        pending = Promise.reject(error);
      }
      pending
        .then(
          toolOutcome,
          (error: unknown): ToolOutcome => ({
            ok: false,
            message: error instanceof Error ? error.message : String(error),
          }),
        )
        .then((outcome) => this.answer(deferred, outcome));
    };
    if (this.active < this.options.limits.maxParallelCalls) call();
    else this.waiting.push(call);
    // The library disposes what a host function returns; the deferred keeps its own handle.
    return deferred.handle.dup();
  }

  /** Settles a tool function's promise in the sandbox, starts a waiting call, runs the script on. */
  private answer(deferred: QuickJSDeferredPromise, outcome: ToolOutcome): void {
    this.active--;
    this.unsettled--;
    if (this.done) return;
    this.waiting.shift()?.();
    this.deferreds.delete(deferred);
    this.enter(() => {
      const json = JSON.stringify(outcome.ok ? [0, outcome.value ?? null] : [1, clip(outcome.message)]);
      const handle = this.context.newString(json);
      deferred.resolve(handle);
      handle.dispose();
      deferred.dispose();
    });
    this.pump();
  }

  private hostLog(levelHandle: QuickJSHandle, textHandle: QuickJSHandle): void {
    const level = this.context.getString(levelHandle);
    const text = this.context.getString(textHandle);
    const line = level === "log" ? text : `[${level}] ${text}`;
    this.outputBytes += Buffer.byteLength(line) + 1;
    if (this.outputBytes > this.options.limits.maxOutputBytes) {
      this.fatal ??= limitError("maxOutputBytes", this.facts());
      throw this.fatal;
    }
    this.logs.push(line);
    this.options.onLog?.(line);
  }

  private hostDone(jsonHandle: QuickJSHandle): void {
    if (this.context.typeof(jsonHandle) !== "string") {
      this.outcome = { value: undefined };
      return;
    }
    const json = this.context.getString(jsonHandle);
    if (this.outputBytes + Buffer.byteLength(json) > this.options.limits.maxOutputBytes) {
      this.fatal ??= limitError("maxOutputBytes", this.facts());
      return;
    }
    this.outcome = { value: JSON.parse(json) };
  }

  private hostFail(descriptionHandle: QuickJSHandle): void {
    const [name, message, stack] = JSON.parse(this.context.getString(descriptionHandle)) as [
      string,
      string,
      string,
    ];
    this.outcome = { error: scriptError(this.facts(), name, clip(message), stack) };
  }
}
