/**
 * Code mode: a script written by a model runs in a QuickJS (WebAssembly) sandbox where each
 * tool it may see is an async function, and `toolDeclarations` tells the model their types.
 * Depends on nothing of mcplex but src/errors.ts.
 */
export { CodeModeError, type CodeModeErrorCode, type CodeModeErrorDetails } from "./code-mode-error.js";
export { type CodeLimits, DEFAULT_LIMITS } from "./limits.js";
export { type RunCodeOptions, runCode } from "./run-code.js";
export type { CallTool, RunCodeResult } from "./sandbox-run.js";
export { type CodeTool, type ToolBinding, toIdentifier, toolBindings } from "./tool-bindings.js";
export { toolDeclarations } from "./tool-declarations.js";
