import { describe, expect, it } from "vitest";
import { importEdges, sourceFiles } from "../scripts/source-imports.js";

/**
 * Cycles tolerated for a while. The list may only shrink: the test fails on a cycle not listed
 * here, and also on a listed one that is gone from the tree, so that whoever removes a cycle
 * removes its line too. Write a cycle as the test prints it: paths under src/, starting from the
 * alphabetically first file.
 */
const KNOWN: readonly string[] = [];

/**
 * Each file under src/ and the files it imports, read with a parser (scripts/source-imports.ts):
 * `import ... from`, `export ... from`, `import "x"`, and `import("x")` in code or in a type.
 * Type-only imports count: a cycle of types is still two concepts that each need the other. So
 * does a dynamic `await import("x")`: loading a part only when it is used (a CLI command, the
 * HTTP front, the workspace server) keeps it out of the start-up, not out of the design, and a
 * part that loads the module that loads it is a cycle all the same.
 */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>(sourceFiles().map((file) => [file, []]));
  for (const { from, to } of importEdges()) graph.get(from)!.push(to);
  for (const [file, targets] of graph) graph.set(file, [...new Set(targets)].sort());
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

  it("reads the whole source tree, type-only imports and import() included", () => {
    expect(graph.size).toBeGreaterThan(100);
    // A type-only edge, a re-export edge and an import() in code, so that the parser's reading is
    // checked, not assumed.
    expect(graph.get("workspace/scan-file.ts")).toContain("workspace/root-wall.ts");
    expect(graph.get("upstream/connect.ts")).toContain("workspace/workspace-server.ts");
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
