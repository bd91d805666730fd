import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runAgent } from "../../src/agent/run-agent.js";
import { CatalogView } from "../../src/catalog-modes/catalog-view.js";
import { viewEngines } from "../../src/catalog-modes/view-engines.js";
import { viewToolHost } from "../../src/catalog-modes/view-tool-host.js";
import { RELAYED_EXTENSIONS } from "../../src/ext/apps/apps-extension.js";
import { Hub } from "../../src/hub/hub.js";
import type { MockTurn } from "../../src/testing/mock-llm-server.js";
import { configOf, stdio } from "../support/config.js";
import { collect, startMockLlm, toolMessages } from "../support/mock-llm.js";

/**
 * Skills in the agent loop, against a hub over two real skills servers (the hand-written
 * fixture, once as "alpha" and once as "beta", serving skills of the same names) and a third
 * whose SKILL.md does not match its listing. Every request the hub sends a server is recorded,
 * so the tests see what was read and when.
 */
const SERVER = "test/fixtures/servers/skills-server.mjs";
let hub: Hub;
const sent: Array<{ server: string; method: string; uri?: string }> = [];
let llm: Awaited<ReturnType<typeof startMockLlm>> | undefined;

beforeAll(async () => {
  hub = new Hub({
    config: configOf([
      stdio("alpha", process.execPath, [SERVER, "--origin", "alpha"]),
      stdio("beta", process.execPath, [SERVER, "--origin", "beta", "--legacy"]),
      stdio("forged", process.execPath, [SERVER, "--origin", "forged", "--tamper"]),
    ]),
    // The fixture lists its app tools only to a client that renders apps, as a gateway's hub does.
    clientCapabilities: { extensions: RELAYED_EXTENSIONS },
    upstreamInterceptors: [
      (next) => (request) => {
        const uri = request.params.uri;
        sent.push({
          server: request.target?.server ?? "",
          method: request.method,
          ...(typeof uri === "string" ? { uri } : {}),
        });
        return next(request);
      },
    ],
  });
  await hub.start();
  expect(hub.servers().map((s) => s.state)).toEqual(["ready", "ready", "ready"]);
});
afterAll(() => hub?.close());
afterEach(async () => {
  await llm?.close();
  llm = undefined;
});

const reads = () => sent.filter((s) => s.method === "resources/read");

async function run(turns: MockTurn[]) {
  llm = await startMockLlm({ turns });
  const agent = runAgent({ hub, llm: llm.llm, messages: [{ role: "user", content: "Fill the form." }] });
  const events = await collect(agent);
  return { events, done: await agent.result, requests: llm.requests };
}

describe("skills in the agent loop", () => {
  it("offers every server's skills by name and description, and reads one only when the model loads it", async () => {
    sent.length = 0;
    const { done, requests } = await run([
      { toolCalls: [{ name: "load_skill", arguments: { name: "beta/pdf-processing" } }] },
      {
        toolCalls: [
          {
            name: "read_skill_file",
            arguments: { skill: "beta/pdf-processing", path: "references/FORMS.md" },
          },
        ],
      },
      { text: "Done." },
    ]);
    const first = requests[0]!.body.tools ?? [];
    const load = first.find((t) => t.function.name === "load_skill");
    expect(load?.function.description).toContain("- alpha/pdf-processing (server alpha): Extract, fill");
    expect(load?.function.description).toContain("- beta/pdf-processing (server beta): Extract, fill");
    expect(first.map((t) => t.function.name)).toContain("read_skill_file");
    // Listing reads nothing; the load reads SKILL.md, the model's request the one file, both of beta.
    expect(reads().map((r) => `${r.server} ${r.uri}`)).toEqual([
      "beta skill://pdf-processing/SKILL.md",
      "beta skill://pdf-processing/references/FORMS.md",
    ]);
    const [loaded, file] = toolMessages({ messages: done.messages });
    expect(loaded?.content).toContain('from the MCP server "beta"');
    expect(loaded?.content).toContain("Served by beta.");
    expect(loaded?.content).toContain("references/FORMS.md, templates/invoice.md");
    expect(file?.content).toContain("How beta fills forms.");
  });

  it("tells the model a skill whose SKILL.md differs from its listing cannot be loaded", async () => {
    sent.length = 0;
    const { done } = await run([
      { toolCalls: [{ name: "load_skill", arguments: { name: "forged/pdf-processing" } }] },
      {
        toolCalls: [
          {
            name: "read_skill_file",
            arguments: { skill: "forged/pdf-processing", path: "references/FORMS.md" },
          },
        ],
      },
      { text: "Could not." },
    ]);
    const [refused, notLoaded] = toolMessages({ messages: done.messages });
    expect(refused?.content).toMatch(/could not be loaded: .*read \d+ bytes, the skill lists \d+/);
    expect(notLoaded?.content).toContain(
      'load the skill first: call load_skill with name "forged/pdf-processing"',
    );
    expect(reads().map((r) => r.uri)).toEqual(["skill://pdf-processing/SKILL.md"]);
  });

  it("offers the skills in search and code mode too, where the view's tool host passes them on", async () => {
    for (const mode of ["search", "code"] as const) {
      llm = await startMockLlm({
        turns: [{ toolCalls: [{ name: "load_skill", arguments: { name: "refunds" } }] }, { text: "ok" }],
      });
      const view = viewToolHost(hub, new CatalogView({ mode, pin: [] }, viewEngines()));
      const agent = runAgent({ hub: view, llm: llm.llm, messages: [{ role: "user", content: "Refund." }] });
      await collect(agent);
      const done = await agent.result;
      const names = (llm.requests[0]!.body.tools ?? []).map((t) => t.function.name);
      expect(names).toContain("load_skill");
      expect(names.filter((n) => n.endsWith("refresh_report"))).toEqual([]);
      // Three servers serve a "refunds": the model must say which.
      const answer = toolMessages({ messages: done.messages })[0]?.content;
      expect(answer).toContain('there is no skill named "refunds"');
      expect(answer).toContain("alpha/refunds, beta/pdf-processing");
      await llm.close();
      llm = undefined;
    }
  });

  it("never offers the model a tool only an app calls", async () => {
    const { requests } = await run([{ text: "Nothing to do." }]);
    const names = (requests[0]!.body.tools ?? []).map((t) => t.function.name);
    expect(names).toContain("alpha__show_report");
    expect(names.filter((n) => n.endsWith("refresh_report"))).toEqual([]);
  });
});
