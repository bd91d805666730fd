/**
 * The cost of code mode, in one run: one runCode (fresh QuickJS runtime and context, the script
 * parsed, one tool call) against calling the same tool directly, as a ratio. Twice: with an
 * in-process tool function (code mode's own overhead against almost nothing) and with
 * server-everything's `echo` over stdio through the hub (what a gateway call costs).
 *
 *   npx tsx bench/code-mode-bench.ts
 */
import type { CallToolResult } from "@modelcontextprotocol/client";
import { type CallTool, runCode } from "../src/code-mode/index.js";
import { Hub } from "../src/hub/hub.js";
import { configOf, EVERYTHING, stdio } from "../test/support/config.js";

async function timed(label: string, n: number, work: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(n, 200); i++) await work();
  const started = performance.now();
  for (let i = 0; i < n; i++) await work();
  const us = ((performance.now() - started) * 1000) / n;
  console.log(`  ${label.padEnd(30)} ${us.toFixed(1).padStart(9)} µs per call`);
  return us;
}

/** Rounds of direct calls and runs in turn; the median ratio. */
async function compare(title: string, server: string, callTool: CallTool, n: number): Promise<void> {
  const tools = [{ server, name: "echo", exposed: `${server}__echo` }];
  const code = `const r = await tools.${server}.echo({ message: "hi" }); return r`;
  const direct = () => callTool(`${server}__echo`, { message: "hi" }, AbortSignal.timeout(10_000));
  console.log(title);
  const ratios: number[] = [];
  for (let round = 1; round <= 3; round++) {
    const plain = await timed(`round ${round}: the tool directly`, n, direct);
    const sandboxed = await timed(`round ${round}: runCode, one call`, Math.ceil(n / 10), () =>
      runCode({ code, tools, callTool }),
    );
    ratios.push(sandboxed / plain);
  }
  const sorted = [...ratios].sort((a, b) => a - b);
  console.log(
    `  runCode / direct: median ${sorted[1]!.toFixed(1)}x (rounds ${ratios.map((r) => r.toFixed(1)).join(", ")})`,
  );
}

const local: CallTool = async (_name, args): Promise<CallToolResult> => ({
  content: [{ type: "text", text: `Echo: ${String(args.message)}` }],
});
await compare("in-process tool function", "bench", local, 10_000);

const hub = new Hub({ config: configOf([stdio("everything", EVERYTHING, ["stdio"])]) });
await hub.start();
try {
  await compare(
    "server-everything echo over stdio (hub.callTool)",
    "everything",
    (name, args, signal) => hub.callTool(name, args, { signal }),
    2_000,
  );
} finally {
  await hub.close();
}
