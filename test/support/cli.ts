import { spawn } from "node:child_process";
import { resolve } from "node:path";

/** The CLI as the package ships it (`bin`): the bundle `npm run build` makes. */
export const CLI = resolve("dist/bin/mcplex.js");

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI and collects its output and exit code. */
export function runCli(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; input?: string; timeout?: number } = {},
): Promise<CliResult> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: options.cwd ?? process.cwd(),
      env: { ...process.env, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeout ?? 60_000);
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? "");
  });
}
