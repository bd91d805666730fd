import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { CLI } from "./cli.js";

/**
 * The modules `mcplex serve --stdio --config <config>` loads in a session that asks for the
 * tools once and ends (`file:` URLs, and the `node:` modules imported from ours), in order, with
 * a `spawn <command> <args>` entry where it starts a process; `env` over the environment
 * (OTEL_* endpoints left out: telemetry is off unless `env` sets one); `cli` the CLI to run
 * (default: the bundle).
 */
export async function modulesLoaded(
  config: string,
  env: Record<string, string> = {},
  cli = CLI,
): Promise<string[]> {
  const { OTEL_EXPORTER_OTLP_ENDPOINT: _a, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: _b, ...clean } = process.env;
  const child = spawn(
    process.execPath,
    [
      // The spawn trace first, so that the module trace does not list it.
      ...["--import", resolve("test/support/spawn-trace.mjs")],
      ...["--import", resolve("test/support/module-trace.mjs")],
      ...[cli, "serve", "--stdio", "--config", config],
    ],
    { env: { ...clean, ...env }, stdio: ["pipe", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (c: string) => {
    stderr += c;
  });
  const exited = new Promise((done) => child.once("exit", done));
  const listed = new Promise<void>((done, fail) => {
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      out += c;
      if (out.includes('"id":2')) done();
    });
    void exited.then(() => fail(new Error(`mcplex exited before its first list: ${stderr}`)));
  });
  child.stdin.write(
    `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } })}\n${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })}\n`,
  );
  await listed;
  child.stdin.end();
  await exited;
  return stderr
    .split("\n")
    .filter((line) => line.startsWith("module ") || line.startsWith("spawn "))
    .map((line) => (line.startsWith("module ") ? line.slice("module ".length) : line));
}
