import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, posix, relative, resolve } from "node:path";

/**
 * Every import of every file under src/, read from the source: the import graph of the cycle
 * test (test/import-cycles.test.ts), of the layering test (test/layer-table.test.ts) and of the
 * folder matrix that `npm run lint:layers -- --matrix` prints.
 */

/** How a file imports another. */
export type ImportKind =
  /** `import ... from`, `export ... from`, `import "x"`: loaded with the module. */
  | "static"
  /** `import type ... from`, `import { type X } from` only, `import("x")` in a type: erased at build. */
  | "type"
  /** `await import("x")` in code: loaded when that code runs. */
  | "dynamic";

export interface SourceImport {
  specifier: string;
  kind: ImportKind;
}

/** One arrow of the graph: `from` imports `to` (both paths under src/, with `/`). */
export interface ImportEdge {
  from: string;
  to: string;
  kind: ImportKind;
}

export const SRC = resolve("src");

/** Every `.ts` file under `dir` (declaration files aside), as paths relative to src/ with `/`. */
export function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts"))
    .map((entry) => relative(SRC, join(entry.parentPath, entry.name)).split("\\").join("/"))
    .sort();
}

// Sucrase's parser (a dependency, for code mode): it reads TypeScript, types included, into
// tokens that know their kind and whether they belong to a type. typescript 7 has no JavaScript
// API to parse with. Its deep modules ship no typings where TypeScript looks, hence the small
// shapes below.
const require = createRequire(import.meta.url);
const { parse } = require("sucrase/dist/parser/index.js") as {
  parse(input: string, jsx: boolean, typescript: boolean, flow: boolean): { tokens: Token[] };
};
const { TokenType } = require("sucrase/dist/parser/tokenizer/types.js") as {
  TokenType: Record<"_import" | "_export" | "string" | "name" | "parenL" | "semi", number>;
};
const { ContextualKeyword } = require("sucrase/dist/parser/tokenizer/keywords.js") as {
  ContextualKeyword: Record<"_from" | "_type", number>;
};
interface Token {
  type: number;
  contextualKeyword: number;
  start: number;
  end: number;
  isType: boolean;
}

/**
 * The imports of a module's text, read from the parser's tokens: `from "x"` (every
 * `import ... from`, `import type ... from`, `export ... from`), `import "x"`, and `import("x")`
 * in code or in a type. An `import()` of anything but a string literal (a path computed at run
 * time) names no module and is left out.
 *
 * A statement is a type import when it starts `import type` or `export type`, or when every
 * name it lists is a type (`import { type A, type B } from`: TypeScript erases it all).
 */
export function importsOfText(text: string): SourceImport[] {
  const { tokens } = parse(text, false, true, false);
  const found: SourceImport[] = [];
  const stringAt = (i: number) =>
    tokens[i]?.type === TokenType.string ? text.slice(tokens[i]!.start + 1, tokens[i]!.end - 1) : undefined;
  let statementStart = 0;
  tokens.forEach((token, i) => {
    if (token.type === TokenType._import || token.type === TokenType._export) {
      if (tokens[i + 1]?.type !== TokenType.parenL) statementStart = i;
    }
    if (token.type === TokenType.name && token.contextualKeyword === ContextualKeyword._from) {
      const specifier = stringAt(i + 1);
      if (specifier === undefined) return;
      const kind = onlyTypes(tokens.slice(statementStart, i)) ? "type" : "static";
      found.push({ specifier, kind });
    } else if (token.type === TokenType._import) {
      if (tokens[i + 1]?.type === TokenType.parenL) {
        const specifier = stringAt(i + 2);
        if (specifier !== undefined) found.push({ specifier, kind: token.isType ? "type" : "dynamic" });
      } else {
        const specifier = stringAt(i + 1);
        if (specifier !== undefined) found.push({ specifier, kind: "static" });
      }
    }
  });
  return found;
}

/**
 * Whether the tokens of an import or export statement up to its `from` bring in types only:
 * `import type` or `export type` (but not `import type from`, a default import named `type`),
 * or every name it lists is a type token (sucrase marks `type A` in braces so).
 */
function onlyTypes(statement: Token[]): boolean {
  const [, second, third, ...rest] = statement;
  if (second === undefined) return false;
  const isFrom = (token: Token | undefined) =>
    token?.type === TokenType.name && token.contextualKeyword === ContextualKeyword._from;
  if (second.type === TokenType.name && second.contextualKeyword === ContextualKeyword._type && !isFrom(third))
    return true;
  const names = [second, third, ...rest].filter((token) => token?.type === TokenType.name);
  return names.length > 0 && names.every((token) => token!.isType);
}

/** The imports of one file under src/. */
export function importsOf(file: string): SourceImport[] {
  return importsOfText(readFileSync(join(SRC, file), "utf8"));
}

/** A relative specifier of `from` as a file of `files` (`./x.js` is `x.ts`), else `undefined`. */
export function resolveSpecifier(from: string, specifier: string, files: Set<string>): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const base = posix.normalize(posix.join(posix.dirname(from), specifier));
  const candidates = [base.replace(/\.js$/, ".ts"), base, `${base}.ts`, `${base}/index.ts`];
  return candidates.find((candidate) => files.has(candidate));
}

/**
 * Every arrow between two files of src/, one per kind a file imports another with (a file that
 * imports a module both statically and dynamically has two arrows to it).
 */
export function importEdges(files = sourceFiles()): ImportEdge[] {
  const known = new Set(files);
  const edges: ImportEdge[] = [];
  for (const from of files) {
    const seen = new Set<string>();
    for (const { specifier, kind } of importsOf(from)) {
      const to = resolveSpecifier(from, specifier, known);
      if (to === undefined || seen.has(`${kind} ${to}`)) continue;
      seen.add(`${kind} ${to}`);
      edges.push({ from, to, kind });
    }
  }
  return edges;
}
