/**
 * Starts `test/conformance/everything-server.ts --http 0` as a child process (through tsx) and
 * waits for its `listening on <url>` line, so tests exercise the real entry point.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
/** tsx, to run the TypeScript entry directly. */
export const TSX = join(ROOT, "node_modules", ".bin", "tsx");
/** The fixture's entry point. */
export const EVERYTHING_SERVER = join(ROOT, "test", "conformance", "everything-server.ts");

export interface SpawnedEverythingServer {
  url: string;
  /** Everything the process wrote to stderr so far. */
  readonly stderr: string;
  close(): Promise<void>;
}

export async function spawnEverythingHttp(
  extraArgs: string[] = [],
  signal: AbortSignal = AbortSignal.timeout(30_000),
): Promise<SpawnedEverythingServer> {
  const child = spawn(TSX, [EVERYTHING_SERVER, "--http", "0", ...extraArgs], {
    cwd: ROOT,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  const url = await new Promise<string>((resolve, reject) => {
    const onAbort = () =>
      fail(new Error(`everything-server did not start: ${String(signal.reason)}\n${stderr}`));
    const fail = (error: Error) => {
      signal.removeEventListener("abort", onAbort);
      child.kill("SIGKILL");
      reject(error);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      stderr += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(stderr);
      if (match?.[1] !== undefined) {
        signal.removeEventListener("abort", onAbort);
        resolve(match[1]);
      }
    });
    child.once("exit", (code) => fail(new Error(`everything-server exited with ${code}\n${stderr}`)));
  });
  return {
    url,
    get stderr() {
      return stderr;
    },
    close: () => stop(child),
  };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  timer.unref();
  await exited;
  clearTimeout(timer);
}
