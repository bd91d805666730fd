/**
 * Plain tools against `run_code` for one multi-step task: "read the six files under docs/ and
 * report which mention OAuth", driven by the chat-completions test server through the real agent
 * loop, the real hub and the real workspace server. The scripted model follows one of two
 * policies a real model shows: one tool call per step, or every independent call in one step.
 * Reports model round trips and prompt tokens (what the model is sent, tools included, counted
 * with the o200k_base tokenizer), and their ratios to code mode, all in this run.
 *
 *   npx tsx bench/code-mode-round-trips.ts
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getEncoding } from "js-tiktoken";
import { runAgent } from "../src/agent/run-agent.js";
import type { ToolHost } from "../src/agent/tool-host.js";
import { CatalogView } from "../src/catalog-modes/catalog-view.js";
import { viewEngines } from "../src/catalog-modes/view-engines.js";
import { viewToolHost } from "../src/catalog-modes/view-tool-host.js";
import { loadConfig } from "../src/config/load-config.js";
import { Hub } from "../src/hub/hub.js";
import { type MockTurn, type RecordedRequest, startMockLlmServer } from "../src/testing/mock-llm-server.js";

const FILES = 6;
const encoder = getEncoding("o200k_base");

const dir = await mkdtemp(join(tmpdir(), "mcplex-round-trips-"));
await mkdir(join(dir, "docs"));
for (let i = 1; i <= FILES; i++) {
  // Files of a realistic size: the plain policies send every one of them back to the model.
  const body = Array.from(
    { length: 40 },
    (_, line) => `Line ${line} of note ${i}: notes on the release.`,
  ).join("\n");
  await writeFile(join(dir, "docs", `note${i}.md`), `${body}\n${i % 2 === 0 ? "It covers OAuth.\n" : ""}`);
}
await writeFile(join(dir, "mcplex.yaml"), `servers:\n  workspace:\n    type: workspace\n    root: ${dir}\n`);
const hub = new Hub({ config: await loadConfig({ config: join(dir, "mcplex.yaml") }) });
await hub.start();

const toolResults = (r: RecordedRequest) =>
  r.body.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
const names = Array.from({ length: FILES }, (_, i) => `note${i + 1}.md`);
const answer = (r: RecordedRequest): MockTurn => {
  const read = toolResults(r).filter((t) => t.includes("notes on the release"));
  return { text: `Files that mention OAuth: ${read.filter((t) => t.includes("OAuth")).length}` };
};

/** One call per step: list, then each file, then the answer. */
const sequential: MockTurn = (r) => {
  const done = toolResults(r).length;
  if (done === 0) return { toolCalls: [{ name: "workspace__list_directory", arguments: { path: "docs" } }] };
  if (done <= FILES)
    return { toolCalls: [{ name: "workspace__read_file", arguments: { path: `docs/${names[done - 1]}` } }] };
  return answer(r);
};

/** Every independent call at once: list, then the six reads in one step, then the answer. */
const parallel: MockTurn = (r) => {
  const done = toolResults(r).length;
  if (done === 0) return { toolCalls: [{ name: "workspace__list_directory", arguments: { path: "docs" } }] };
  if (done === 1)
    return {
      toolCalls: names.map((n) => ({ name: "workspace__read_file", arguments: { path: `docs/${n}` } })),
    };
  return answer(r);
};

const script = `
const { entries } = await tools.workspace.list_directory({ path: "docs" });
const hits = [];
for (const e of entries) {
  const { content } = await tools.workspace.read_file({ path: "docs/" + e.name });
  if (content.includes("OAuth")) hits.push(e.name);
}
return hits;`;
const code: MockTurn = (r) =>
  toolResults(r).length === 0
    ? { toolCalls: [{ name: "run_code", arguments: { code: script } }] }
    : { text: `Files that mention OAuth: ${toolResults(r)[0]}` };

interface Outcome {
  roundTrips: number;
  promptTokens: number;
  answer: string;
}

async function measure(policy: MockTurn, host: ToolHost): Promise<Outcome> {
  const llm = await startMockLlmServer({ fallback: policy });
  let text = "";
  try {
    for await (const event of runAgent({
      hub: host,
      llm: { baseUrl: llm.url, model: "mock" },
      messages: [{ role: "user", content: "Read the files under docs/ and tell me which mention OAuth." }],
      maxSteps: 20,
    })) {
      if (event.type === "text-delta") text += event.text;
      if (event.type === "error") throw event.error;
    }
    const promptTokens = llm.requests.reduce(
      (sum, r) =>
        sum + encoder.encode(JSON.stringify({ messages: r.body.messages, tools: r.body.tools ?? [] })).length,
      0,
    );
    return { roundTrips: llm.requests.length, promptTokens, answer: text };
  } finally {
    await llm.close();
  }
}

try {
  const codeHost = viewToolHost(hub, new CatalogView({ mode: "code" }, viewEngines()));
  const rows: Array<[string, Outcome]> = [
    ["plain tools, one call per step", await measure(sequential, hub)],
    ["plain tools, parallel calls", await measure(parallel, hub)],
    ["run_code", await measure(code, codeHost)],
  ];
  const base = rows[2]![1];
  console.log(`task: ${FILES} files read, the ones mentioning OAuth reported\n`);
  console.log("| policy | round trips | x code | prompt tokens | x code | answer |");
  console.log("| --- | --- | --- | --- | --- | --- |");
  for (const [name, o] of rows) {
    console.log(
      `| ${name} | ${o.roundTrips} | ${(o.roundTrips / base.roundTrips).toFixed(1)} | ${o.promptTokens} | ${(o.promptTokens / base.promptTokens).toFixed(1)} | ${o.answer.replace(/\n/g, " ").slice(0, 50)} |`,
    );
  }
} finally {
  await hub.close();
  await rm(dir, { recursive: true, force: true });
}
