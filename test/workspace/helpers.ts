import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

/** The two protocol generations every stdio test runs against. */
export type Era = "2025" | "2026";
export const ERAS: Era[] = ["2025", "2026"];

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const entry = path.join(repo, "src/workspace/stdio-main.ts");

/** A temp directory (realpath'd), removed by the returned cleanup. */
export async function tempDir(prefix = "mcplex-ws-"): Promise<string> {
  return realpath(await mkdtemp(path.join(tmpdir(), prefix)));
}

/** Write files (path → contents) under `root`, creating directories. */
export async function writeTree(root: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [rel, contents] of Object.entries(files)) {
    const abs = path.join(root, rel);
    await mkdir(path.dirname(abs), { recursive: true });
    await writeFile(abs, contents);
  }
}

/** The standard tree most tests use. */
export async function standardTree(): Promise<string> {
  const root = await tempDir();
  await writeTree(root, {
    "README.md": "# Demo\n\nA small tree.\n",
    "src/index.ts": 'export const greeting = "hello";\nexport const needle = 42;\n',
    "src/util/strings.ts": "export function upper(s: string) {\n  return s.toUpperCase();\n}\n",
    "docs/guide.md": "Guide\n=====\n\nfind the NEEDLE here\n",
    "data/image.png": Buffer.from([
      0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48,
    ]),
    "data/blob.bin": Buffer.concat([Buffer.from("needle"), Buffer.alloc(16, 0)]),
    ".gitignore": "ignored/\n*.log\n",
    "ignored/skip.txt": "needle in ignored\n",
    "app.log": "needle in log\n",
    ".git/config": "[core]\n\tneedle = secret\n",
  });
  await mkdir(path.join(root, "out"), { recursive: true });
  return root;
}

/** A connected SDK v2 client over real stdio to a spawned workspace server. */
export interface Connection {
  client: Client;
  close(): Promise<void>;
}

/** Spawn the workspace server on `root` and connect a client of the given protocol generation. */
export async function connect(
  root: string,
  options: { era?: Era; allowWrite?: boolean; rules?: string[] } = {},
): Promise<Connection> {
  const args = ["--import", "tsx", entry, "--root", root];
  if (options.allowWrite) args.push("--allow-write");
  for (const rule of options.rules ?? []) args.push("--rule", rule);
  return connectCommand(process.execPath, args, options.era ?? "2025");
}

/** Connect a client to any stdio server command. */
export async function connectCommand(command: string, args: string[], era: Era): Promise<Connection> {
  const client = new Client(
    { name: "workspace-test", version: "1.0.0" },
    era === "2026" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
  );
  const transport = new StdioClientTransport({ command, args, cwd: repo, stderr: "pipe" });
  await client.connect(transport);
  const expected = era === "2026" ? "2026-07-28" : "2025-11-25";
  if (client.getNegotiatedProtocolVersion() !== expected) {
    throw new Error(`negotiated ${client.getNegotiatedProtocolVersion()}, expected ${expected}`);
  }
  return { client, close: () => client.close() };
}

/** Remove a temp tree. */
export async function removeTree(root: string | undefined): Promise<void> {
  if (root !== undefined) await rm(root, { recursive: true, force: true });
}

/** The text of a tool result's first content block. */
export function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content[0]?.text ?? "";
}

/** Resolve when `register` delivers a value matching `accept`, reject after `ms`. */
export function waitForEvent<T>(
  register: (deliver: (value: T) => void) => void,
  accept: (value: T) => boolean,
  ms = 5000,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no matching event within ${ms} ms`)), ms);
    register((value) => {
      if (accept(value)) {
        clearTimeout(timer);
        resolve(value);
      }
    });
  });
}
