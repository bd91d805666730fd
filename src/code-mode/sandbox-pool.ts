/**
 * Scripts run in worker threads, not on the host's event loop.
 *
 * QuickJS checks its interrupt handler (the wall-time limit) only every ten thousand or so
 * steps of bytecode, and a step can be a builtin running for milliseconds: a loop over
 * `indexOf` in a 4 MB string ran 186 s under a 250 ms limit, with the host's event loop (the
 * whole gateway) blocked all along. In a worker the host stays responsive, and at the time limit
 * (counted from when the script starts in its worker, not while a new worker loads, plus a
 * grace for the worker to report it itself) or at a cancellation the worker is terminated,
 * whatever it is doing. A worker runs one script at a time; up to
 * {@link IDLE_WORKERS} are kept for the next runs (a new one costs tens of ms). Which script
 * gets a worker when, and how many run at once, is the fair queue's call (sandbox-queue.ts).
 */
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { CallToolResult } from "@modelcontextprotocol/client";
import { CodeModeError } from "./code-mode-error.js";
import type { CodeLimits } from "./limits.js";
import type { PreparedScript } from "./prepare-script.js";
import { MAX_WORKERS, sandboxQueue } from "./sandbox-queue.js";
import type { CallTool, RunCodeResult } from "./sandbox-run.js";
import type { FromWorker, ToWorker, WorkerBinding } from "./sandbox-worker.js";
import type { ToolBinding } from "./tool-bindings.js";

/** Idle workers kept for the next runs. */
export const IDLE_WORKERS = 2;
/** How long past `wallMs` a worker may take to report its own timeout before it is terminated. */
const GRACE_MS = 500;

const idle: Worker[] = [];
let spawned = 0;
let terminated = 0;

export { MAX_WORKERS };

/**
 * Workers started and terminated (by a limit, a cancellation or a full pool) since the process
 * started, runs now running and waiting, and runs refused as busy (CODE_BUSY).
 */
export function sandboxWorkerStats(): {
  spawned: number;
  terminated: number;
  running: number;
  waiting: number;
  refused: number;
} {
  return { spawned, terminated, ...sandboxQueue.stats() };
}

function spawn(): Worker {
  spawned++;
  const worker = import.meta.url.endsWith(".ts")
    ? spawnFromSources()
    : new Worker(new URL("./sandbox-worker.js", import.meta.url));
  // A run in progress hears of an error or an exit through its own listeners; an idle worker
  // that dies just leaves the pool.
  worker.on("error", () => {});
  worker.on("exit", () => {
    const index = idle.indexOf(worker);
    if (index >= 0) idle.splice(index, 1);
  });
  return worker;
}

/**
 * From the sources (tests, tsx) the worker is TypeScript: it registers tsx's loader (a
 * devDependency) before importing it, since Node 20 does not apply `--import` hooks in workers.
 */
function spawnFromSources(): Worker {
  // require.resolve gives the CommonJS build; its ESM sibling is the one that registers hooks.
  const tsx = pathToFileURL(
    createRequire(import.meta.url)
      .resolve("tsx/esm/api")
      .replace(/\.cjs$/, ".mjs"),
  ).href;
  const entry = new URL("./sandbox-worker.ts", import.meta.url).href;
  return new Worker(
    `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`,
    { eval: true },
  );
}

function retire(worker: Worker): void {
  terminated++;
  void worker.terminate();
}

export interface PoolRun {
  script: PreparedScript;
  bindings: readonly ToolBinding[];
  limits: CodeLimits;
  callTool: CallTool;
  signal: AbortSignal | undefined;
  /** Whose run it is: a client's runs share its queue and its share of the workers. */
  client: string;
}

/** Runs one script in a worker once the fair queue grants one; rejects with a {@link CodeModeError}. */
export async function runInWorker(run: PoolRun): Promise<RunCodeResult> {
  const { queueMs, maxQueued, wallMs } = run.limits;
  const slot = await sandboxQueue.acquire(run.client, { queueMs, maxQueued, wallMs }, run.signal);
  try {
    return await runOnWorker(run);
  } finally {
    slot.release();
  }
}

function runOnWorker(run: PoolRun): Promise<RunCodeResult> {
  return new Promise((resolve, reject) => {
    const worker = idle.pop() ?? spawn();
    worker.ref();
    const calls = new AbortController();
    let toolCalls = 0;
    // The console lines so far, for an error made here when the worker is killed.
    const logs: string[] = [];
    let ended = false;
    const end = (outcome: { result: RunCodeResult } | { error: CodeModeError }, keep: boolean) => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      run.signal?.removeEventListener("abort", onAbort);
      worker.off("message", onMessage);
      worker.off("error", onError);
      worker.off("exit", onExit);
      calls.abort(
        "error" in outcome ? outcome.error : new CodeModeError("CODE_ERROR", "the script has ended"),
      );
      if (keep && idle.length < IDLE_WORKERS) {
        worker.unref();
        idle.push(worker);
      } else retire(worker);
      if ("error" in outcome) reject(outcome.error);
      else resolve(outcome.result);
    };
    let timer: NodeJS.Timeout | undefined;
    const timeUp = () => {
      const { wallMs } = run.limits;
      end(
        {
          error: new CodeModeError(
            "CODE_TIMEOUT",
            `The script ran longer than its time limit of ${wallMs} ms (limits.wallMs).`,
            {
              toolCalls,
              logs,
              path: "limits.wallMs",
              hint: "Do less in one run (call tools in parallel with Promise.all, stop loops earlier), or have the host raise limits.wallMs.",
            },
          ),
        },
        false,
      );
    };
    const onAbort = () =>
      end(
        {
          error: new CodeModeError(
            "REQUEST_ABORTED",
            "The run was cancelled by its caller.",
            { toolCalls, logs, hint: "Nothing to fix in the script; run it again if it is still wanted." },
            { cause: run.signal?.reason },
          ),
        },
        false,
      );
    const onError = (error: Error) =>
      end(
        {
          error: new CodeModeError(
            "CODE_ERROR",
            `The sandbox failed: ${error.message}.`,
            { toolCalls, logs },
            { cause: error },
          ),
        },
        false,
      );
    const onExit = () => onError(new Error("its worker exited"));
    const onMessage = (message: FromWorker) => {
      if (message.type === "started") {
        timer = setTimeout(timeUp, run.limits.wallMs + GRACE_MS);
        return;
      }
      if (message.type === "log") {
        logs.push(message.line);
        return;
      }
      if (message.type === "end") {
        if (message.result !== undefined) end({ result: message.result }, true);
        else {
          const { code, message: text, ...fields } = message.error!;
          end({ error: new CodeModeError(code, text, fields) }, true);
        }
        return;
      }
      toolCalls++;
      const answer = (reply: ToWorker) => {
        if (ended) return;
        try {
          worker.postMessage(reply);
        } catch (error) {
          worker.postMessage({
            type: "answer",
            call: message.call,
            error: `the tool's result cannot be passed on: ${String(error)}`,
          });
        }
      };
      let pending: Promise<CallToolResult>;
      try {
        pending = Promise.resolve(run.callTool(message.exposed, message.args, calls.signal));
      } catch (error) {
        pending = Promise.reject(error);
      }
      pending.then(
        (result) => answer({ type: "answer", call: message.call, result }),
        (error: unknown) =>
          answer({
            type: "answer",
            call: message.call,
            error: error instanceof Error ? error.message : String(error),
          }),
      );
    };
    worker.on("message", onMessage);
    worker.on("error", onError);
    worker.on("exit", onExit);
    run.signal?.addEventListener("abort", onAbort);
    const bindings: WorkerBinding[] = run.bindings.map((b) => ({
      namespace: b.namespace,
      method: b.method,
      tool: { exposed: b.tool.exposed },
    }));
    worker.postMessage({ type: "run", script: run.script, bindings, limits: run.limits } satisfies ToWorker);
  });
}
