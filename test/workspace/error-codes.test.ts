import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerConfig } from "../../src/config/types.js";
import { Hub } from "../../src/hub/hub.js";
import { RootWall } from "../../src/workspace/root-wall.js";
import { WorkspaceError } from "../../src/workspace/workspace-error.js";
import { configOf } from "../support/config.js";
import {
  type Connection,
  connect,
  ERAS,
  removeTree,
  standardTree,
  tempDir,
  textOf,
  writeTree,
} from "./helpers.js";

// What a client sees of each kind of workspace refusal: the text a model reads, and in
// `_meta["mcplex/error"]` the stable code and the reason a program can act on.

interface ErrorMeta {
  code?: string;
  reason?: string;
}

function errorMeta(result: unknown): ErrorMeta | undefined {
  return (result as { _meta?: Record<string, ErrorMeta> })._meta?.["mcplex/error"];
}

describe.each(ERAS)("workspace tool errors carry a code (%s protocol)", (era) => {
  let root: string;
  let conn: Connection;
  let call: (name: string, args: Record<string, unknown>) => Promise<any>;

  beforeAll(async () => {
    root = await standardTree();
    await writeFile(path.join(root, "big.txt"), `${"x".repeat(99)}\n`.repeat(12_000)); // 1.2 MB
    await writeFile(path.join(path.dirname(root), `${path.basename(root)}-outside.txt`), "outside\n");
    conn = await connect(root, { era, allowWrite: true });
    call = (name, args) => conn.client.callTool({ name, arguments: args });
  });
  afterAll(async () => {
    await conn?.close();
    await removeTree(path.join(path.dirname(root), `${path.basename(root)}-outside.txt`));
    await removeTree(root);
  });

  it("WORKSPACE_NOT_FOUND for a path that does not exist", async () => {
    const result = await call("read_file", { path: "missing.txt" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe("'missing.txt' does not exist");
    expect(errorMeta(result)).toEqual({ code: "WORKSPACE_NOT_FOUND", reason: "not-found" });
  });

  it("WORKSPACE_DENIED for a path outside the root", async () => {
    const outside = `../${path.basename(root)}-outside.txt`;
    const result = await call("read_file", { path: outside });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain(`Refused '${outside}': it is outside the workspace root`);
    expect(errorMeta(result)).toEqual({ code: "WORKSPACE_DENIED", reason: "outside-root" });
  });

  it("WORKSPACE_DENIED for a path a rule refuses", async () => {
    const result = await call("read_file", { path: ".git/config" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Access denied: read of '\.git\/config' is not allowed by/);
    expect(errorMeta(result)).toEqual({ code: "WORKSPACE_DENIED", reason: "denied" });
  });

  it("WORKSPACE_TOO_LARGE for a file over the read limit", async () => {
    const result = await call("read_file", { path: "big.txt" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /^'big\.txt' is 1\.1 MiB .*, over the 1\.0 MiB .*read limit; read a line range/,
    );
    expect(errorMeta(result)).toEqual({ code: "WORKSPACE_TOO_LARGE", reason: "too-large" });
  });

  it("INVALID_ARGUMENT for a mistake in the request (a directory read as a file, a binary file)", async () => {
    const dir = await call("read_file", { path: "src" });
    expect(textOf(dir)).toBe(
      "Refused 'src': it is a directory, not a regular file (rule: regular files only)",
    );
    expect(errorMeta(dir)).toEqual({ code: "INVALID_ARGUMENT", reason: "not-a-file" });
    const binary = await call("read_file", { path: "data/image.png" });
    expect(textOf(binary)).toMatch(/^'data\/image\.png' is a binary file/);
    expect(errorMeta(binary)).toEqual({ code: "INVALID_ARGUMENT", reason: "binary" });
  });

  it("a refused resources/read names the code and reason in the JSON-RPC error data", async () => {
    const uri = pathToFileURL(path.join(root, ".git/config")).href;
    const error = await conn.client.readResource({ uri }).then(
      () => undefined,
      (e: unknown) => e as { data?: unknown; message: string },
    );
    expect(error?.message).toMatch(/Access denied: read of/);
    expect(error?.data).toMatchObject({ uri, code: "WORKSPACE_DENIED", reason: "denied" });
  });
});

describe("workspace tool errors that take a while to provoke", () => {
  let base: string;
  let root: string;
  let conn: Connection;
  let call: (name: string, args: Record<string, unknown>) => Promise<any>;

  beforeAll(async () => {
    base = await tempDir("mcplex-codes-");
    root = path.join(base, "root");
    await writeTree(base, {
      "root/evil.txt": `fine line\n${"a".repeat(40)}b\n`,
      "root/f.txt": "inside\n",
      "outside/secret.txt": "outside\n",
    });
    conn = await connect(root, { allowWrite: true });
    call = (name, args) => conn.client.callTool({ name, arguments: args });
  });
  afterAll(async () => {
    await conn?.close();
    await removeTree(base);
  });

  it("WORKSPACE_TOO_SLOW for a search regex that backtracks without end", async () => {
    const result = await call("search_files", { query: "(a+)+$", regex: true });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Regular expression \/\(a\+\)\+\$\/ ran longer than \d+ ms on evil\.txt/);
    expect(errorMeta(result)).toEqual({ code: "WORKSPACE_TOO_SLOW", reason: "too-slow" });
  }, 60_000);

  it("WORKSPACE_RACE for a file swapped for a symlink while it is read", async () => {
    const swapper = await startSwapper(
      path.join(base, "outside/secret.txt"),
      path.join(base, "stop"),
      path.join(root, "f.txt"),
    );
    const seen = new Map<string, ErrorMeta | undefined>();
    let race: { text: string; meta: ErrorMeta | undefined } | undefined;
    try {
      // The swapper runs in its own process: a lost race is a matter of attempts, so try
      // until one shows, with a cap far above what it takes.
      for (let i = 0; i < 5000 && race === undefined; i++) {
        const result = await call("read_file", { path: "f.txt" });
        const meta = errorMeta(result);
        if (meta?.reason !== undefined) seen.set(meta.reason, meta);
        if (meta?.reason === "race") race = { text: textOf(result), meta };
      }
    } finally {
      await swapper.stop();
    }
    expect(race?.meta).toEqual({ code: "WORKSPACE_RACE", reason: "race" });
    expect(race?.text).toMatch(/^Refused 'f\.txt': it (became a symlink|was replaced) after it was checked/);
    // Whatever else the swaps provoked has its own code, never a race's.
    for (const meta of seen.values())
      if (meta?.reason !== "race") expect(meta?.code).not.toBe("WORKSPACE_RACE");
  }, 120_000);
});

describe("through the hub", () => {
  it("a library caller gets the code and reason of a workspace tool error too", async () => {
    const root = await standardTree();
    const hub = new Hub({
      config: configOf([
        {
          name: "files",
          transport: "workspace",
          root,
          allowWrite: false,
          rules: [],
          enabled: true,
          timeout: 10_000,
          startTimeout: 20_000,
          lazy: false,
          tools: {},
        } as ServerConfig,
      ]),
    });
    try {
      await hub.start();
      const result = await hub.callTool("files__read_file", { path: "missing.txt" });
      expect(result.isError).toBe(true);
      expect(errorMeta(result)).toEqual({ code: "WORKSPACE_NOT_FOUND", reason: "not-found" });
    } finally {
      await hub.close();
      await removeTree(root);
    }
  });
});

describe("WorkspaceError codes in the library", () => {
  it("a root the server cannot serve is INVALID_ARGUMENT, whatever the reason", async () => {
    const missing = path.join(await tempDir(), "no-such-root");
    const error = (() => {
      try {
        return new RootWall(missing);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(WorkspaceError);
    expect(error).toMatchObject({ reason: "not-found", code: "INVALID_ARGUMENT" });
    await removeTree(path.dirname(missing));
  });

  it("a lost race is retryable; a refusal is not", () => {
    expect(new WorkspaceError("race", "moved", { path: "a" }).retryable).toBe(true);
    expect(new WorkspaceError("denied", "no", { path: "a" }).retryable).toBe(false);
  });
});

const swapperScript = fileURLToPath(new URL("../fixtures/symlink-swapper.mjs", import.meta.url));

/** Swap `target` between a regular file and a symlink to `outside` in another process until stopped. */
async function startSwapper(
  outside: string,
  stopFile: string,
  target: string,
): Promise<{ stop(): Promise<void> }> {
  rmSync(stopFile, { force: true });
  const child: ChildProcess = spawn(process.execPath, [swapperScript, "file", outside, stopFile, target], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = once(child, "exit");
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once("data", () => resolve());
    child.once("exit", (code) => reject(new Error(`swapper exited early (${code})`)));
  });
  return {
    async stop() {
      mkdirSync(path.dirname(stopFile), { recursive: true });
      writeFileSync(stopFile, "");
      await exited;
    },
  };
}
