import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { parse } from "acorn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMANDS, resultText, serveHttp } from "../support/gateway.js";

// The package as a user gets it: `npm pack` from a copy of the sources (with a file planted in
// dist/, as a long-used checkout has from a source since removed), the tarball installed into an
// empty prefix (offline from the npm cache `npm install` filled), and the installed `mcplex` run
// from there. The copy keeps `npm pack`'s build away from the repo's dist/, which other test
// files run while this one does. One pack and one install for every check: they take most of
// this file's time.

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, "../..");
const manifest = JSON.parse(await readFile(join(repo, "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
/** The environment of a shell on a clean machine: none of the npm_* settings `npm test` sets. */
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));

/**
 * Module names the built code may name without depending on them, with the reason. Anything
 * else named in dist/ must be a Node built-in or in `dependencies`.
 */
const NAMED_BUT_NOT_LOADED: Record<string, string> = {
  tsx: "code-mode/sandbox-pool resolves tsx only when it runs from the .ts sources; the build starts its .js worker",
};

let dir: string;
let tarballFiles: string[];
let installed: string;
let bin: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-pack-"));
  const checkout = join(dir, "checkout");
  for (const entry of ["src", "web", "scripts", "package.json", "tsconfig.json", "README.md"]) {
    await cp(join(repo, entry), join(checkout, entry), { recursive: true });
  }
  // The build needs the compiler and types: a clone would have run `npm install`.
  await symlink(await realpath(join(repo, "node_modules")), join(checkout, "node_modules"));
  await mkdir(join(checkout, "dist"));
  await writeFile(join(checkout, "dist", "left-over.js"), "// from a source file since removed\n");
  const packed = await run("npm", ["pack", "--json", "--pack-destination", dir], {
    cwd: checkout,
    env: cleanEnv,
  });
  const [pack] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarballFiles = pack!.files.map((f) => f.path);
  const prefix = join(dir, "prefix");
  await mkdir(prefix);
  await run(
    "npm",
    ["install", "--prefix", prefix, "--prefer-offline", "--no-audit", "--no-fund", join(dir, pack!.filename)],
    { cwd: dir, env: cleanEnv },
  );
  installed = join(prefix, "node_modules", "mcplex");
  bin = join(prefix, "node_modules", ".bin", "mcplex");
}, 300_000);

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

/** The package a module specifier names (`@scope/name` or `name`), or undefined for a relative one. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith(".") || specifier.startsWith("/")) return undefined;
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/**
 * Every module a file names as a string literal: static and dynamic imports, re-exports,
 * `require(...)` and `*.resolve(...)` (createRequire, import.meta.resolve).
 */
function namedModules(code: string): string[] {
  const names: string[] = [];
  const literal = (node: unknown) => {
    const n = node as { type?: string; value?: unknown } | null;
    if (n?.type === "Literal" && typeof n.value === "string") names.push(n.value);
  };
  const visit = (node: unknown): void => {
    if (node === null || typeof node !== "object") return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    const n = node as Record<string, unknown> & { type?: string };
    if (
      n.type === "ImportDeclaration" ||
      n.type === "ExportAllDeclaration" ||
      n.type === "ExportNamedDeclaration" ||
      n.type === "ImportExpression"
    )
      literal(n.source);
    if (n.type === "CallExpression") {
      const callee = n.callee as {
        type: string;
        name?: string;
        object?: { type: string; name?: string };
        property?: { name?: string };
      };
      const isRequire = callee.type === "Identifier" && callee.name === "require";
      // require.resolve and import.meta.resolve; not Promise.resolve("input") and its like.
      const isResolve =
        callee.type === "MemberExpression" &&
        callee.property?.name === "resolve" &&
        ((callee.object?.type === "Identifier" && callee.object.name === "require") ||
          callee.object?.type === "MetaProperty");
      if (isRequire || isResolve) literal((n.arguments as unknown[])[0]);
    }
    for (const value of Object.values(n)) if (typeof value === "object") visit(value);
  };
  visit(parse(code, { ecmaVersion: "latest", sourceType: "module" }));
  return names;
}

describe("npm pack", () => {
  it("packs the build, the dashboard and the README, built afresh: no sources, tests or left-over files", () => {
    for (const file of [
      "dist/cli/main.js",
      "dist/assembly/entries/index.js",
      "dist/assembly/entries/index.d.ts",
      "web/dashboard/index.html",
    ])
      expect(tarballFiles).toContain(file);
    expect(tarballFiles).toContain("README.md");
    expect(tarballFiles.filter((f) => f.startsWith("src/") || f.startsWith("test/"))).toEqual([]);
    expect(tarballFiles).not.toContain("dist/left-over.js");
  });
});

describe("the installed package", () => {
  it("installs no devDependency, and its code names none", async () => {
    const modules = join(installed, "..");
    const present = await readdir(modules);
    const scoped = (
      await Promise.all(
        present
          .filter((n) => n.startsWith("@"))
          .map(async (s) => (await readdir(join(modules, s))).map((n) => `${s}/${n}`)),
      )
    ).flat();
    const installedNames = new Set([...present, ...scoped]);
    expect(Object.keys(manifest.devDependencies).filter((name) => installedNames.has(name))).toEqual([]);

    const builtins = new Set(builtinModules);
    const stray = new Map<string, string>();
    for (const file of await filesUnder(join(installed, "dist"))) {
      if (!file.endsWith(".js")) continue;
      for (const specifier of namedModules(await readFile(file, "utf8"))) {
        const name = packageOf(specifier);
        if (name === undefined || specifier.startsWith("node:") || builtins.has(name)) continue;
        if (name in manifest.dependencies || name in NAMED_BUT_NOT_LOADED) continue;
        stray.set(specifier, relative(installed, file));
      }
    }
    expect(Object.fromEntries(stray)).toEqual({});
  });

  it("loads every entry point with only its dependencies present", async () => {
    const entries = ["mcplex", "mcplex/agent", "mcplex/gateway", "mcplex/testing", "mcplex/workspace"];
    const script = `for (const e of ${JSON.stringify(entries)}) await import(e); console.log("loaded");`;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], {
      cwd: join(installed, "..", ".."),
      env: cleanEnv,
    });
    expect(stdout.trim()).toBe("loaded");
  });

  it("serves the embedded workspace over HTTP with no config, and its dashboard", async () => {
    const workspace = join(dir, "workspace");
    await mkdir(workspace);
    await writeFile(join(workspace, "hello.txt"), "hello from the installed package\n");
    const served = await serveHttp([], { bin, cwd: workspace, env: cleanEnv as Record<string, string> });
    const client = new Client({ name: "packed-install", version: "1.0.0" });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(served.url)));
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain("workspace__read_file");
      const read = await client.callTool({ name: "workspace__read_file", arguments: { path: "hello.txt" } });
      expect(resultText(read)).toContain("hello from the installed package");
      const dashboard = await fetch(`${served.origin}/dashboard`);
      expect(dashboard.status).toBe(200);
      expect(await dashboard.text()).toContain("<html");
    } finally {
      await client.close();
      await served.stop();
    }
  });

  it("lists and calls a configured server", async () => {
    const config = join(dir, "mcplex.yaml");
    const { command, args } = COMMANDS.everything;
    await writeFile(
      config,
      `servers:\n  everything:\n    command: ${command}\n    args: ${JSON.stringify(args)}\n`,
    );
    const list = await run(bin, ["list", "--config", config, "--json"], { cwd: dir, env: cleanEnv });
    const [server] = (
      JSON.parse(list.stdout) as { servers: Array<{ state: string; tools: Array<{ name: string }> }> }
    ).servers;
    expect(server?.state).toBe("ready");
    expect(server?.tools.map((t) => t.name)).toContain("everything__echo");
    const call = await run(
      bin,
      ["call", "everything__echo", '{"message":"from the tarball"}', "--config", config],
      {
        cwd: dir,
        env: cleanEnv,
      },
    );
    expect(call.stdout).toContain("from the tarball");
  });
});
