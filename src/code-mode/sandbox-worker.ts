/**
 * The worker thread a sandbox runs in (see sandbox-pool.ts for why). It runs one script at a
 * time: a `run` message in, `call` messages out for each tool call (answered by `answer`), and
 * one `end` message with the result or the error.
 */

import { parentPort } from "node:worker_threads";
import type { CallToolResult } from "@modelcontextprotocol/client";
import { CodeModeError, type CodeModeErrorCode } from "./code-mode-error.js";
import type { CodeLimits } from "./limits.js";
import type { PreparedScript } from "./prepare-script.js";
import { quickjsModule } from "./quickjs-module.js";
import { type RunCodeResult, SandboxRun } from "./sandbox-run.js";
import type { ToolBinding } from "./tool-bindings.js";

/** A binding as the worker needs it: where the tool is, and its exposed name. */
export type WorkerBinding = Pick<ToolBinding, "namespace" | "method"> & { tool: { exposed: string } };

/** What a failed run sends back: a {@link CodeModeError}'s fields. */
export interface WorkerError {
  code: CodeModeErrorCode;
  message: string;
  hint?: string;
  path?: string;
  line?: number;
  column?: number;
  logs: string[];
  toolCalls: number;
}

export type ToWorker =
  | { type: "run"; script: PreparedScript; bindings: WorkerBinding[]; limits: CodeLimits }
  | { type: "answer"; call: number; result?: CallToolResult; error?: string };

export type FromWorker =
  | { type: "call"; call: number; exposed: string; args: Record<string, unknown> }
  | { type: "started" }
  | { type: "log"; line: string }
  | { type: "end"; result?: RunCodeResult; error?: WorkerError };

function errorFields(error: unknown): WorkerError {
  if (error instanceof CodeModeError) {
    const fields: WorkerError = {
      code: error.code,
      message: error.message,
      logs: [...error.logs],
      toolCalls: error.toolCalls,
    };
    for (const key of ["hint", "path", "line", "column"] as const)
      if (error[key] !== undefined) Object.assign(fields, { [key]: error[key] });
    return fields;
  }
  return {
    code: "CODE_ERROR",
    message: `The sandbox failed: ${error instanceof Error ? error.message : String(error)}.`,
    logs: [],
    toolCalls: 0,
  };
}

const port = parentPort;
if (port !== null) {
  const answers = new Map<number, (answer: { result?: CallToolResult; error?: string }) => void>();
  let nextCall = 0;
  const send = (message: FromWorker) => port.postMessage(message);
  const callTool = (exposed: string, args: Record<string, unknown>) =>
    new Promise<CallToolResult>((resolve, reject) => {
      const call = nextCall++;
      answers.set(call, (answer) =>
        answer.result !== undefined ? resolve(answer.result) : reject(new Error(answer.error)),
      );
      send({ type: "call", call, exposed, args });
    });
  port.on("message", (message: ToWorker) => {
    if (message.type === "answer") {
      answers.get(message.call)?.(message);
      answers.delete(message.call);
      return;
    }
    const { script, bindings, limits } = message;
    quickjsModule(limits.memoryBytes)
      .then((module) => {
        // The script's time starts now: the host's own deadline counts from here, not from
        // a worker that was still loading.
        send({ type: "started" });
        return new SandboxRun({
          module,
          script,
          bindings: bindings as ToolBinding[],
          callTool,
          limits,
          signal: undefined,
          onLog: (line) => send({ type: "log", line }),
        }).start();
      })
      .then(
        (result) => send({ type: "end", result }),
        (error: unknown) => send({ type: "end", error: errorFields(error) }),
      )
      .finally(() => answers.clear());
  });
}
