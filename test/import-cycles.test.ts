import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, posix, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve("src");

/**
 * Cycles tolerated for a while (none now). The list may only shrink: the test fails on a cycle
 * not listed here, and also on a listed one that is gone from the tree, so that whoever removes
 * a cycle removes its line too. Write a cycle as the test prints it: paths under src/, starting
 * from the alphabetically first file.
 */
const KNOWN: readonly string[] = [];

/** Every `.ts` file under `dir` (declaration files aside), as paths relative to src/ with `/`. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts"))
    .map((entry) => relative(SRC, join(entry.parentPath, entry.name)).split("\\").join("/"))
    .sort();
}

// Sucrase's parser (a dependency, for code mode): it reads TypeScript, types included, into
// tokens that know their kind. typescript 7 has no JavaScript API to parse with. Its deep
// modules ship no typings where TypeScript looks, hence the small shapes below.
const require = createRequire(import.meta.url);
const { parse } = require("sucrase/dist/parser/index.js") as {
  parse(input: string, jsx: boolean, typescript: boolean, flow: boolean): { tokens: Token[] };
};
const { TokenType } = require("sucrase/dist/parser/tokenizer/types.js") as {
  TokenType: Record<"_import" | "string" | "name" | "parenL", number>;
};
const { ContextualKeyword } = require("sucrase/dist/parser/tokenizer/keywords.js") as {
  ContextualKeyword: Record<"_from", number>;
};
interface Token {
  type: number;
  contextualKeyword: number;
  start: number;
  end: number;
  isType: boolean;
}

/**
 * The modules a file imports, read from the parser's tokens: `from "x"` (every `import ... from`,
 * `import type ... from`, `export ... from`), `import "x"`, and `import("x")` in a type. Type-only
 * imports count: a cycle of types is still two concepts that each need the other. A dynamic
 * `await import("x")` in code does not: it is how a module loads a part only when it is used
 * (a CLI command, the HTTP front, the workspace server), a dependency at run time that the
 * module graph at load time never sees and that cannot leave a module half-initialised.
 */
function importsOf(file: string): string[] {
  const text = readFileSync(join(SRC, file), "utf8");
  const { tokens } = parse(text, false, true, false);
  const specifiers: string[] = [];
  const stringAt = (i: number) =>
    tokens[i]?.type === TokenType.string ? text.slice(tokens[i]!.start + 1, tokens[i]!.end - 1) : undefined;
  tokens.forEach((token, i) => {
    let specifier: string | undefined;
    if (token.type === TokenType.name && token.contextualKeyword === ContextualKeyword._from)
      specifier = stringAt(i + 1);
    else if (token.type === TokenType._import) {
      specifier = stringAt(i + 1);
      if (token.isType && tokens[i + 1]?.type === TokenType.parenL) specifier = stringAt(i + 2);
    }
    if (specifier !== undefined) specifiers.push(specifier);
  });
  return specifiers;
}

/** A relative specifier of `from` as a file of `files` (`./x.js` is `x.ts`), else `undefined`. */
function resolveSpecifier(from: string, specifier: string, files: Set<string>): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const base = posix.normalize(posix.join(posix.dirname(from), specifier));
  const candidates = [base.replace(/\.js$/, ".ts"), base, `${base}.ts`, `${base}/index.ts`];
  return candidates.find((candidate) => files.has(candidate));
}

function importGraph(): Map<string, string[]> {
  const files = sourceFiles(SRC);
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = importsOf(file)
      .map((specifier) => resolveSpecifier(file, specifier, known))
      .filter((target): target is string => target !== undefined);
    graph.set(file, [...new Set(targets)].sort());
  }
  return graph;
}

/**
 * Every elementary cycle, each once, written from its alphabetically first file: a search from
 * each file in order that only walks files after it, so a cycle is found only from its first.
 * Bounded, since a tangle of files could hold very many cycles; the first ones are enough to
 * act on.
 */
function findCycles(graph: Map<string, string[]>, limit = 200): string[] {
  const cycles: string[] = [];
  const order = [...graph.keys()].sort();
  for (const start of order) {
    const path = [start];
    const onPath = new Set(path);
    const visit = (node: string): void => {
      for (const next of graph.get(node) ?? []) {
        if (cycles.length >= limit) return;
        if (next === start) cycles.push([...path, start].join(" -> "));
        else if (next > start && !onPath.has(next)) {
          path.push(next);
          onPath.add(next);
          visit(next);
          onPath.delete(next);
          path.pop();
        }
      }
    };
    visit(start);
  }
  return cycles;
}

describe("import cycles", () => {
  const graph = importGraph();
  const cycles = findCycles(graph);

  it("reads the whole source tree, type-only imports included", () => {
    expect(graph.size).toBeGreaterThan(100);
    // A type-only edge and a re-export edge, so that the parser's reading is checked, not assumed.
    expect(graph.get("workspace/scan-file.ts")).toContain("workspace/root-wall.ts");
    expect(graph.get("assembly/entries/index.ts")).toContain("errors.ts");
  });

  it("finds a cycle when there is one", () => {
    const tangled = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts", "a.ts"]],
      ["c.ts", ["a.ts"]],
      ["d.ts", ["d.ts"]],
    ]);
    expect(findCycles(tangled)).toEqual([
      "a.ts -> b.ts -> c.ts -> a.ts",
      "a.ts -> b.ts -> a.ts",
      "d.ts -> d.ts",
    ]);
  });

  it("has no cycle but the known ones being removed", () => {
    const unknown = cycles.filter((cycle) => !KNOWN.includes(cycle));
    expect(unknown, `import cycles in src/:\n${unknown.join("\n")}`).toEqual([]);
  });

  it("keeps the list of known cycles honest: each one is still in the tree", () => {
    const gone = KNOWN.filter((cycle) => !cycles.includes(cycle));
    expect(gone, "no longer cycles: remove them from KNOWN in test/import-cycles.test.ts").toEqual([]);
  });
});
