import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";
import { type Connection, connect, removeTree, tempDir, textOf, writeTree } from "./helpers.js";

const swapperScript = fileURLToPath(new URL("../fixtures/symlink-swapper.mjs", import.meta.url));
/** Marks everything outside the root: no name, content or size of it may ever come back. */
const OUTSIDE = "OUTSIDE-SECRET";
/** An unusual size, so a leaked size is recognisable even without its name. */
const OUTSIDE_SIZE = 31_337;
/** Directories at depth 2 swapped at once: each listing of the tree gets that many chances to hit the race. */
const SWAPPED = ["b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7"];

interface Swapper {
  /** Stop the loop and wait for it; resolves to the number of swap cycles it made. */
  stop(): Promise<number>;
}

/** Start a swapper of `targets` in its own process (a real race: it runs while the server works) and wait until it swaps. */
async function startSwapper(
  mode: "dir" | "missing" | "file",
  outside: string,
  stopFile: string,
  targets: string[],
): Promise<Swapper> {
  rmSync(stopFile, { force: true });
  const child: ChildProcess = spawn(process.execPath, [swapperScript, mode, outside, stopFile, ...targets], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (chunk: string) => {
    out += chunk;
  });
  const exited = once(child, "exit");
  await new Promise<void>((resolve, reject) => {
    const onData = () => {
      if (out.startsWith("ready\n")) {
        child.stdout!.off("data", onData);
        resolve();
      }
    };
    child.stdout!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`swapper exited early (${code})`)));
  });
  return {
    async stop() {
      writeFileSync(stopFile, "");
      await exited;
      rmSync(stopFile, { force: true });
      return Number(out.slice("ready\n".length).trim());
    },
  };
}

describe("workspace races against a symlink swapper in another process", () => {
  let base: string;
  let root: string;
  let outside: string;
  let conn: Connection;
  let call: (name: string, args: Record<string, unknown>) => Promise<any>;
  const swapDirs = () =>
    startSwapper(
      "dir",
      path.join(outside, "dir"),
      path.join(base, "stop"),
      SWAPPED.map((name) => path.join(root, "a", name)),
    );

  beforeAll(async () => {
    base = await tempDir("mcplex-races-");
    root = path.join(base, "root");
    outside = path.join(base, "outside");
    await writeTree(base, {
      ...Object.fromEntries(
        SWAPPED.flatMap((name) => [
          [`root/a/${name}/inside.txt`, "inside needle\n"],
          [`root/a/${name}/c/deeper.txt`, "deeper needle\n"],
        ]),
      ),
      "root/f.txt": "inside\n",
      [`outside/dir/${OUTSIDE}-name.txt`]: `${OUTSIDE} needle\n`.padEnd(OUTSIDE_SIZE, "x"),
      [`outside/dir/sub/${OUTSIDE}-deep.txt`]: `${OUTSIDE} needle\n`,
      "outside/secret.txt": `${OUTSIDE}\n`,
    });
    mkdirSync(path.join(root, "w"));
    mkdirSync(path.join(outside, "mk"));
    conn = await connect(root, { allowWrite: true });
    call = (name, args) => conn.client.callTool({ name, arguments: args });
  });
  afterAll(async () => {
    await conn?.close();
    await removeTree(base);
  });

  /** Whether anything from outside the root shows in a result. */
  function leaks(value: unknown): boolean {
    const text = JSON.stringify(value);
    return text.includes(OUTSIDE) || text.includes(`"size":${OUTSIDE_SIZE}`);
  }

  /**
   * Runs `attempt` while directories are swapped for symlinks to outside, and counts the
   * results that show anything from outside; reports the figure under `attack`.
   */
  async function leaksUnderSwaps(attack: string, attempt: (i: number) => Promise<unknown>): Promise<number> {
    const runs = attackSize(100, 500);
    const swapper = await swapDirs();
    let leaked = 0;
    try {
      for (let i = 0; i < runs; i++) if (leaks(await attempt(i))) leaked++;
    } finally {
      const swaps = await swapper.stop();
      reportFigure(attack, `${leaked} leaks in ${runs} runs (${swaps} swaps)`);
    }
    return leaked;
  }

  it(
    "list_directory at depth 3 never lists a directory swapped for a symlink to outside",
    async () => {
      const leaked = await leaksUnderSwaps("list_directory depth 3 vs dir/symlink swap", () =>
        call("list_directory", { path: ".", depth: 3 }),
      );
      expect(leaked).toBe(0);
    },
    attackTimeout(120_000, 600_000),
  );

  it(
    "search_files (names and contents) never reports a file from a directory swapped for a symlink to outside",
    async () => {
      // By name, by plain text and by regex: three ways through the walk and the reads.
      const ways = [{}, { query: "needle" }, { query: "need+le", regex: true }];
      const leaked = await leaksUnderSwaps("search_files vs dir/symlink swap", (i) =>
        call("search_files", ways[i % 3]!),
      );
      expect(leaked).toBe(0);
    },
    attackTimeout(120_000, 600_000),
  );

  it(
    "resources/list never lists a file from a directory swapped for a symlink to outside",
    async () => {
      const leaked = await leaksUnderSwaps("resources/list vs dir/symlink swap", () =>
        conn.client.listResources(),
      );
      expect(leaked).toBe(0);
    },
    attackTimeout(120_000, 600_000),
  );

  it(
    "path completion never offers names from a directory swapped for a symlink to outside",
    async () => {
      const { resourceTemplates } = await conn.client.listResourceTemplates();
      const uri = resourceTemplates[0]!.uriTemplate;
      const leaked = await leaksUnderSwaps("path completion vs dir/symlink swap", (i) =>
        conn.client.complete({
          ref: { type: "ref/resource", uri },
          argument: { name: "path", value: `a/${SWAPPED[i % SWAPPED.length]}/` },
        }),
      );
      expect(leaked).toBe(0);
    },
    attackTimeout(120_000, 600_000),
  );

  it(
    "write_file with createParents never creates a directory outside through a symlink appearing at a missing parent",
    async () => {
      const runs = attackSize(100, 500);
      const missing = path.join(root, "w/c");
      const swapper = await startSwapper("missing", path.join(outside, "mk"), path.join(base, "stop"), [
        missing,
      ]);
      let escaped = 0;
      let written = 0;
      const unclear: string[] = [];
      try {
        for (let i = 0; i < runs; i++) {
          const result = await call("write_file", {
            path: "w/c/d/new.txt",
            content: "new\n",
            createParents: true,
          });
          if (!result.isError) written++;
          else if (!/^Refused 'w\/c\/d\/new.txt'/.test(textOf(result))) unclear.push(textOf(result));
          if (readdirSync(path.join(outside, "mk")).length > 0) {
            escaped++;
            rmSync(path.join(outside, "mk"), { recursive: true });
            mkdirSync(path.join(outside, "mk"));
          }
          // A directory the write made inside the root takes the symlink's place: take it away again.
          const st = (() => {
            try {
              return lstatSync(missing);
            } catch {
              return undefined;
            }
          })();
          if (st?.isDirectory()) rmSync(missing, { recursive: true, force: true });
        }
      } finally {
        const swaps = await swapper.stop();
        reportFigure(
          "write_file createParents vs appearing symlink",
          `${escaped} directories created outside in ${runs} runs, ${written} writes inside (${swaps} swaps)`,
        );
      }
      expect(escaped).toBe(0);
      // A lost race is refused as such, naming the path, never as a bare system error.
      expect(unclear).toEqual([]);
    },
    attackTimeout(120_000, 600_000),
  );

  it(
    "read_file and write_file against a file swapped for a symlink to outside: nothing read from or changed outside",
    async () => {
      const runs = attackSize(100, 5000);
      const swapper = await startSwapper("file", path.join(outside, "secret.txt"), path.join(base, "stop"), [
        path.join(root, "f.txt"),
      ]);
      let leaked = 0;
      try {
        for (let i = 0; i < runs; i++) {
          const result =
            i % 2 === 0
              ? await call("read_file", { path: "f.txt" })
              : await call("write_file", { path: "f.txt", content: "written\n" });
          if (leaks(result)) leaked++;
        }
      } finally {
        const swaps = await swapper.stop();
        reportFigure(
          "read_file/write_file vs file/symlink swap",
          `${leaked} leaks in ${runs} runs (${swaps} swaps)`,
        );
      }
      expect(leaked).toBe(0);
      expect(readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe(`${OUTSIDE}\n`);
      expect(readdirSync(outside).sort()).toEqual(["dir", "mk", "secret.txt"]);
    },
    attackTimeout(120_000, 1_200_000),
  );
});
