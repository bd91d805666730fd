/**
 * The cost of code mode: one runCode (fresh QuickJS runtime and context, the script parsed,
 * one tool call) against calling the same tool function directly, in one run, as a ratio.
 * The tool is an in-process function, so the figure is code mode's own overhead.
 *
 *   npx tsx bench/code-mode-bench.ts
 */
import type { CallToolResult } from "@modelcontextprotocol/client";
import { runCode } from "../src/code-mode/index.js";

const tools = [{ server: "bench", name: "echo", exposed: "bench__echo" }];
const callTool = async (_name: string, args: Record<string, unknown>): Promise<CallToolResult> => ({
  content: [{ type: "text", text: JSON.stringify({ echoed: args.message }) }],
});
const code = "const r = await tools.bench.echo({ message: 'hi' }); return r.echoed";

async function direct(): Promise<unknown> {
  const result = await callTool("bench__echo", { message: "hi" });
  const block = result.content[0] as { text: string };
  return (JSON.parse(block.text) as { echoed: string }).echoed;
}

async function timed(label: string, n: number, work: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(n, 200); i++) await work();
  const started = performance.now();
  for (let i = 0; i < n; i++) await work();
  const us = ((performance.now() - started) * 1000) / n;
  console.log(`${label.padEnd(34)} ${us.toFixed(1).padStart(9)} µs per call`);
  return us;
}

const rounds = 3;
const ratios: number[] = [];
for (let round = 1; round <= rounds; round++) {
  const plain = await timed(`round ${round}: tool function directly`, 20_000, direct);
  const sandboxed = await timed(`round ${round}: runCode with one call`, 1_000, () =>
    runCode({ code, tools, callTool }),
  );
  ratios.push(sandboxed / plain);
}
ratios.sort((a, b) => a - b);
console.log(
  `runCode / direct: median ${ratios[1]!.toFixed(0)}x (rounds ${ratios.map((r) => r.toFixed(0)).join(", ")})`,
);
