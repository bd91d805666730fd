import { parseDocument as parseYamlDocument } from "yaml";
import type { ConfigIssue } from "../errors.js";
import { configErrorFrom } from "./config-issues.js";

/** Which parser reads a config file. */
export type ConfigSyntax = "json" | "yaml";

/** Picks the parser from the file name; unknown extensions are sniffed (`{` means JSON). */
export function syntaxOf(source: string, text: string): ConfigSyntax {
  if (/\.jsonc?$/i.test(source)) return "json";
  if (/\.ya?ml$/i.test(source)) return "yaml";
  return text.trimStart().startsWith("{") ? "json" : "yaml";
}

/**
 * Parses the text of a config file into plain data. JSON files may hold `//` and `/* *\/`
 * comments and trailing commas, as VS Code's `mcp.json` does. Syntax errors are a
 * ConfigError whose message starts with `file:line:column`.
 */
export function parseDocument(text: string, source: string, syntax = syntaxOf(source, text)): unknown {
  return syntax === "json" ? parseJson(text, source) : parseYaml(text, source);
}

function syntaxError(source: string, issue: Omit<ConfigIssue, "code" | "path">): never {
  throw configErrorFrom(source, [{ code: "CONFIG_INVALID", path: "", ...issue }]);
}

function parseYaml(text: string, source: string): unknown {
  const doc = parseYamlDocument(text, { prettyErrors: false, uniqueKeys: true, merge: true });
  const error = doc.errors[0];
  if (error !== undefined) {
    const [line, column] = lineColumn(text, error.pos[0]);
    syntaxError(source, { line, column, message: `YAML syntax error: ${error.message.split("\n")[0]}` });
  }
  return doc.toJS({ maxAliasCount: 100 });
}

function parseJson(text: string, source: string): unknown {
  const clean = stripJsonComments(text);
  try {
    return JSON.parse(clean);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    const position = /at position (\d+)/.exec(detail);
    const [line, column] = lineColumn(text, position === null ? text.length : Number(position[1]));
    const message = detail
      .replace(/ in JSON at position \d+.*$/, "")
      .replace(/^Unexpected end of JSON input$/, "unexpected end of file");
    syntaxError(source, { line, column, message: `JSON syntax error: ${message}` });
  }
}

/** 1-based line and column of an offset. */
function lineColumn(text: string, offset: number): [number, number] {
  const before = text.slice(0, Math.max(0, offset));
  const line = before.split("\n").length;
  const column = offset - (before.lastIndexOf("\n") + 1) + 1;
  return [line, column];
}

/**
 * Blanks out comments and trailing commas with spaces, keeping every other character (and
 * so every error position) where it was.
 */
export function stripJsonComments(text: string): string {
  const out = text.split("");
  let i = 0;
  let lastSignificant = -1;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '"') {
      for (i += 1; i < text.length && text[i] !== '"' && text[i] !== "\n"; i += 1) {
        if (text[i] === "\\") i += 1;
      }
      lastSignificant = i;
      i += 1;
    } else if (ch === "/" && text[i + 1] === "/") {
      for (; i < text.length && text[i] !== "\n"; i += 1) out[i] = " ";
    } else if (ch === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      const stop = end < 0 ? text.length : end + 2;
      for (; i < stop; i += 1) if (text[i] !== "\n") out[i] = " ";
    } else if (ch === "}" || ch === "]") {
      if (lastSignificant >= 0 && text[lastSignificant] === ",") out[lastSignificant] = " ";
      lastSignificant = i;
      i += 1;
    } else {
      if (ch !== undefined && !/\s/.test(ch)) lastSignificant = i;
      i += 1;
    }
  }
  return out.join("");
}
