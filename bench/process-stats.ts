/**
 * What the benchmarks read of their processes and command lines, shared so that every bench
 * counts CPU the same way.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";

const TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** CPU seconds process `pid` has used (Linux /proc: utime + stime); throws once it is gone. */
export function cpuSeconds(pid: number): number {
  // Fields 14 and 15 (utime, stime) follow the parenthesised command name.
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}

/** The positive number after `name` on the command line, else `fallback`. */
export function numberArg(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  const value = at === -1 ? fallback : Number(process.argv[at + 1]);
  if (!(value > 0)) throw new Error(`${name} wants a positive number`);
  return value;
}

/** Spawns a Node process that prints `url <url>` once listening; resolves with it and the child. */
export async function listening(args: string[], what: string): Promise<{ url: URL; child: ChildProcess }> {
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve, reject) => {
    let text = "";
    child.stdout!.setEncoding("utf8").on("data", (c: string) => {
      text += c;
      const m = /url (\S+)/.exec(text);
      if (m) resolve(m[1]!);
    });
    child.once("exit", (code) => reject(new Error(`${what} exited with ${code}`)));
  });
  return { url: new URL(url), child };
}
