// Instructions per 2026 `tools/call` through the HTTP front (dashboard on, an in-process echo
// tool) and through a bare node:http JSON echo, both as bench/http-target.ts serves them, counted
// by valgrind's callgrind in the target process only: what bench/gateway-http-bench.ts measures in
// calls/s, without the machine's load in it. One call in flight; each target runs twice (N1 and
// N2 calls after the same warm-up) and the difference per call is printed, which leaves start-up
// (tsx's loading of the target included) out. Compiles and full GCs still land in the window now
// and then: read the per-function diff of the kept files (KEEP_CG=1) before trusting a
// difference under about 20k.
//   npm run build && npx tsx bench/gateway-http-callgrind.ts [WARM] [N1] [N2]   (about 5 minutes)
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { post, REV2026_ECHO_HEADERS, REV2026_META } from "./http-post.js";

const [warm = 6000, n1 = 1000, n2 = 4000] = process.argv.slice(2).map(Number);
const dir = mkdtempSync(join(tmpdir(), "mcplex-http-callgrind-"));
const target = new URL("./http-target.ts", import.meta.url).pathname;

async function instructions(kind: "bare" | "mcplex", calls: number): Promise<number> {
  const out = join(dir, `cg.${kind}.${calls}`);
  const child = spawn(
    "valgrind",
    [
      "--tool=callgrind",
      `--callgrind-out-file=${out}`,
      process.execPath,
      // As in gateway-callgrind.mjs: compiles and collects on the main thread, no time-driven GC.
      "--predictable",
      "--import",
      "tsx",
      target,
      kind,
    ],
    { stdio: ["ignore", "pipe", "ignore"] },
  );
  const url = await new Promise<URL>((resolve, reject) => {
    let text = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      text += chunk;
      const m = /url (\S+)/.exec(text);
      if (m) resolve(new URL(m[1]!));
    });
    child.once("exit", (code) => reject(new Error(`${kind} target exited with ${code}`)));
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  for (let id = 1; id <= warm + calls; id++) {
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { _meta: REV2026_META, name: "echo", arguments: { message: "hi" } },
    });
    const text = await post(agent, url, body, REV2026_ECHO_HEADERS);
    if (!text.includes('"hi"')) throw new Error(text);
  }
  agent.destroy();
  // Valgrind writes the counts when the target ends, by a signal too.
  child.removeAllListeners("exit");
  const closed = new Promise((resolve) => child.on("close", resolve));
  child.kill("SIGINT");
  await closed;
  return Number(/^summary: (\d+)/m.exec(readFileSync(out, "utf8"))![1]);
}

const perCall: Record<string, number> = {};
for (const kind of ["bare", "mcplex"] as const) {
  const a = await instructions(kind, n1);
  const b = await instructions(kind, n2);
  perCall[kind] = Math.round((b - a) / (n2 - n1));
}
if (!process.env.KEEP_CG) rmSync(dir, { recursive: true, force: true });
else console.log("kept", dir);
console.log(
  `instructions per HTTP tools/call (callgrind, ${n1} vs ${n2} calls after ${warm}, one in flight)`,
);
console.log(`bare node:http JSON echo   ${perCall.bare}`);
console.log(`mcplex gateway front       ${perCall.mcplex}`);
console.log(`bare / mcplex              ${(perCall.bare! / perCall.mcplex!).toFixed(2)}`);
