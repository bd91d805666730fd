import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { processGone } from "../support/wait.js";

/** Starts the hub host process and resolves with it and its server's pids. */
async function hubHost(): Promise<{ kill: (signal: NodeJS.Signals) => void; pids: number[] }> {
  const child = spawn(process.execPath, ["--import", "tsx", "test/fixtures/hub-host.ts"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const pids = await new Promise<number[]>((resolve, reject) => {
    let text = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      text += chunk;
      const match = /pids (\d+) (\d+)/.exec(text);
      if (match) resolve([Number(match[1]), Number(match[2])]);
    });
    child.once("exit", (code) => reject(new Error(`hub host exited early with ${code}`)));
  });
  return { kill: (signal) => child.kill(signal), pids };
}

describe("child processes never outlive the hub", () => {
  it.each(["SIGKILL", "SIGTERM", "SIGINT"] as const)(
    "are gone after the hub's process gets %s",
    async (signal) => {
      const host = await hubHost();
      for (const pid of host.pids) expect(() => process.kill(pid, 0)).not.toThrow();
      host.kill(signal);
      await Promise.all(host.pids.map((pid) => processGone(pid, 15_000)));
    },
  );
});
