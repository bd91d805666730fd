import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAgent } from "../../src/agent/run-agent.js";
import type { MockQuirk } from "../../src/testing/mock-llm-chunks.js";
import type { MockTurn } from "../../src/testing/mock-llm-server.js";
import { createHubToolHost, defaultServers, type HubToolHost } from "../support/hub-tool-host.js";
import { collect, ofType, startMockLlm, toolMessages } from "../support/mock-llm.js";

let host: HubToolHost;
let cleanup: () => void;

beforeAll(async () => {
  const servers = defaultServers();
  cleanup = servers.cleanup;
  host = await createHubToolHost(servers.servers);
});

afterAll(async () => {
  await host?.close();
  cleanup?.();
});

const QUIRKS: MockQuirk[] = [
  "none",
  "missing-index",
  "same-index",
  "whole-calls",
  "late-name",
  "object-arguments",
  "empty-arguments",
  "empty-ids",
  "duplicate-ids",
  "stop-after-tool-calls",
  "text-tags",
  "text-json",
  "no-done",
];

function script(quirk: MockQuirk, person: string): MockTurn[] {
  return [
    {
      text: "Let me look that up.",
      quirk,
      toolCalls: [
        { name: "everything__get-sum", arguments: { a: 2, b: 3 } },
        {
          name: "memory__create_entities",
          arguments: { entities: [{ name: person, entityType: "person", observations: ["likes sums"] }] },
        },
      ],
    },
    (request) => {
      const results = toolMessages(request.body);
      const sum = results[0]?.content ?? "";
      const saved = results[1]?.content.includes(person) ? `${person} is saved` : "nothing saved";
      return { text: `${sum} Also, ${saved}.`, quirk };
    },
  ];
}

describe("runAgent end to end with server-everything and server-memory behind the hub", () => {
  it.each(QUIRKS)(
    "calls two tools in parallel and answers, text free of tool traffic (quirk %s)",
    async (quirk) => {
      const person = `Ada${QUIRKS.indexOf(quirk)}`;
      const llm = await startMockLlm({ turns: script(quirk, person), wire: { chunkSize: 7 } });
      try {
        const before = host.calls.length;
        const run = runAgent({
          hub: host,
          llm: llm.llm,
          messages: [{ role: "user", content: "What is 2+3? And remember me." }],
        });
        let text = "";
        const textDone = (async () => {
          for await (const piece of run.textStream) text += piece;
        })();
        const events = await collect(run);
        await textDone;

        const expected = `Let me look that up.The sum of 2 and 3 is 5. Also, ${person} is saved.`;
        expect(text.replace(/\n/g, "")).toBe(expected);
        expect(text).not.toMatch(/tool_call|get-sum|create_entities|"arguments"|\{/);
        const done = (await run.result)!;
        expect(done).toMatchObject({ outcome: "stop", steps: 2 });
        expect(host.calls.slice(before).map((c) => c.name)).toEqual([
          "everything__get-sum",
          "memory__create_entities",
        ]);
        expect(ofType(events, "tool-result").every((r) => !r.isError)).toBe(true);

        // What the model was sent the second time: assistant tool_calls, then results in call order, ids paired.
        const second = llm.requests[1]!.body;
        const assistant = second.messages.at(-3) as {
          role: string;
          tool_calls: Array<{ id: string; function: { name: string } }>;
        };
        expect(assistant.role).toBe("assistant");
        const ids = assistant.tool_calls.map((c) => c.id);
        expect(new Set(ids).size).toBe(2);
        expect(ids.every((id) => id.length > 0)).toBe(true);
        expect(toolMessages(second).map((m) => m.tool_call_id)).toEqual(ids);
        expect(assistant.tool_calls.map((c) => c.function.name)).toEqual([
          "everything__get-sum",
          "memory__create_entities",
        ]);
      } finally {
        await llm.close();
      }
    },
  );
});
