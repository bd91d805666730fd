/**
 * From the model's text to the body the sandbox runs: TypeScript types stripped, the syntax
 * checked with positions, and the value chosen (a top-level `return`, else the last statement
 * when it is an expression).
 *
 * Types are stripped with sucrase: pure JavaScript, no native parts, fast, and it keeps every
 * line where it was, so the sandbox's line numbers are the script's. TypeScript 7 (our
 * devDependency) ships a native compiler with no JavaScript API, and Node 20 has no type
 * stripping. acorn then parses the result as a script, which gives exact positions for
 * JavaScript errors and the statement list that the last-expression rule needs.
 */
import { type Program, parse } from "acorn";
import { transform } from "sucrase";
import { CodeModeError } from "./code-mode-error.js";

/** What the sandbox evaluates: an async arrow function around the script (on its first line). */
export interface PreparedScript {
  /** `(async () => {<script>\n})`, evaluated to a function the runner calls. */
  source: string;
  /** Characters before the script on line 1, to map columns back. */
  prefixLength: number;
  /** Where `return (` was put before the last expression (1-based line, 0-based offset in it), to map columns back. */
  inserted?: { line: number; column: number; length: number };
}

const PREFIX = "(async () => {";

/** A syntax error at a 1-based position. */
function syntaxError(message: string, line?: number, column?: number, cause?: unknown): CodeModeError {
  const where =
    line === undefined ? "" : ` (line ${line}${column === undefined ? "" : `, column ${column}`})`;
  return new CodeModeError(
    "CODE_SYNTAX",
    `The script does not parse: ${message}${where}.`,
    {
      ...(line === undefined ? {} : { line }),
      ...(column === undefined ? {} : { column }),
      hint: "Write plain JavaScript or TypeScript statements (no import/export); use `return` for the result.",
    },
    { cause },
  );
}

/** Removes the "(line:column)" that sucrase and acorn append to their messages. */
const bare = (message: string) => message.replace(/\s*\(\d+:\d+\)$/, "");

/** Strips types, checks the syntax and wraps the script for the sandbox. Throws CODE_SYNTAX. */
export function prepareScript(code: string): PreparedScript {
  let js: string;
  try {
    // keepUnusedImports: an `import` must reach acorn and fail there, not vanish silently.
    js = transform(code, {
      transforms: ["typescript"],
      disableESTransforms: true,
      keepUnusedImports: true,
      production: true,
    }).code;
  } catch (error) {
    const loc = (error as { loc?: { line: number; column: number } }).loc;
    if (error instanceof RangeError)
      throw syntaxError("it is nested too deeply", undefined, undefined, error);
    // sucrase's column is 1-based already.
    throw syntaxError(bare(String((error as Error).message)), loc?.line, loc?.column, error);
  }
  let program: Program;
  try {
    program = parse(js, {
      ecmaVersion: "latest",
      sourceType: "script",
      allowReturnOutsideFunction: true,
      allowAwaitOutsideFunction: true,
    });
  } catch (error) {
    if (error instanceof RangeError)
      throw syntaxError("it is nested too deeply", undefined, undefined, error);
    const loc = (error as { loc?: { line: number; column: number } }).loc;
    throw syntaxError(
      bare(String((error as Error).message)),
      loc?.line,
      loc === undefined ? undefined : loc.column + 1,
      error,
    );
  }
  const last = program.body.at(-1);
  if (last?.type === "ExpressionStatement" && !("directive" in last && last.directive)) {
    const expression = js.slice(last.expression.start, last.expression.end);
    const before = js.slice(0, last.start);
    const line = before.split("\n").length;
    const column = last.start - (before.lastIndexOf("\n") + 1);
    js = `${before}return (${expression});${js.slice(last.end)}`;
    return {
      source: `${PREFIX}${js}\n})`,
      prefixLength: PREFIX.length,
      inserted: { line, column, length: "return (".length },
    };
  }
  return { source: `${PREFIX}${js}\n})`, prefixLength: PREFIX.length };
}
