/**
 * Agent loop benchmark.
 * 1. One step with 8 tool calls that each take 200 ms (server-everything's
 *    trigger-long-running-operation): the step's tool phase should be close to one call, not 8.
 * 2. Loop overhead per step against a zero-latency mock LLM, in microseconds.
 * Run: npx tsx bench/agent-loop.ts
 */
import { performance } from "node:perf_hooks";
import type { AgentEvent } from "../src/agent/agent-events.js";
import { runAgent } from "../src/agent/run-agent.js";
import type { ToolHost } from "../src/agent/tool-host.js";
import { startMockLlmServer } from "../src/testing/mock-llm-server.js";
import { createHubToolHost, defaultServers } from "../test/support/hub-tool-host.js";

const servers = defaultServers();
const host = await createHubToolHost(servers.servers);
const slow = { name: "everything__trigger-long-running-operation", arguments: { duration: 0.2, steps: 1 } };

try {
  // Baseline: one call on its own.
  const t0 = performance.now();
  await host.callTool(slow.name, slow.arguments);
  const single = performance.now() - t0;

  const llm = await startMockLlmServer({
    turns: [{ toolCalls: Array.from({ length: 8 }, () => slow) }, { text: "done" }],
  });
  let firstCall = 0;
  let lastResult = 0;
  for await (const event of runAgent({
    hub: host,
    llm: { baseUrl: llm.url, model: "mock" },
    messages: [{ role: "user", content: "go" }],
  })) {
    if (event.type === "tool-call" && firstCall === 0) firstCall = performance.now();
    if (event.type === "tool-result") lastResult = performance.now();
  }
  await llm.close();
  const parallel = lastResult - firstCall;
  console.log(
    `8 x 200 ms tools in one step: ${parallel.toFixed(0)} ms; one call alone: ${single.toFixed(0)} ms; ratio ${(parallel / single).toFixed(2)}x (target <= 1.3x, serial would be ~8x)`,
  );

  // Loop overhead: a tool that answers at once, a mock that answers at once.
  const instant: ToolHost = {
    tools: () => host.tools(),
    callTool: async () => ({ content: [{ type: "text", text: "ok" }] }),
  };
  // Many short runs (10 steps each), so the history stays short as in a real conversation.
  const runs = 200;
  const stepsPerRun = 10;
  const steps = runs * stepsPerRun;
  const turn = { toolCalls: [{ name: "everything__echo", arguments: { message: "x" } }] };
  const fast = await startMockLlmServer({ fallback: turn });
  const started = performance.now();
  let counted = 0;
  for (let r = 0; r < runs; r++) {
    for await (const event of runAgent({
      hub: instant,
      llm: { baseUrl: fast.url, model: "mock" },
      messages: [{ role: "user", content: "go" }],
      maxSteps: stepsPerRun,
    }) as AsyncIterable<AgentEvent>) {
      if (event.type === "step-end") counted++;
    }
  }
  const total = performance.now() - started;
  // The same body the loop sent at its middle step, for a like-for-like wire baseline.
  const sample = fast.requests[Math.floor(stepsPerRun / 2)]!.rawBody;
  await fast.close();
  // Measure the bare HTTP round trip (same body, same mock) with the same mock, to separate loop overhead from the wire.
  const wire = await startMockLlmServer({ fallback: turn });
  const w0 = performance.now();
  for (let i = 0; i < steps; i++) {
    const res = await fetch(`${wire.url}/chat/completions`, {
      method: "POST",
      body: sample,
    });
    await res.text();
  }
  const wireTotal = performance.now() - w0;
  await wire.close();
  const perStep = (total / counted) * 1000;
  const perWire = (wireTotal / steps) * 1000;
  console.log(
    `loop: ${perStep.toFixed(0)} µs/step over ${counted} steps; bare HTTP round trip (same body, same mock) ${perWire.toFixed(0)} µs; loop overhead ≈ ${(perStep - perWire).toFixed(0)} µs/step (10-step runs)`,
  );
} finally {
  await host.close();
  servers.cleanup();
}
