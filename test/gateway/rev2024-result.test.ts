import { describe, expect, it } from "vitest";
import { resultForRev2024 } from "../../src/gateway/rev2024-result.js";

// What no real upstream here returns (audio, structured output with no content): the rule
// applied to results as the dispatcher hands them over.

describe("results for a 2024-11-05 client", () => {
  it("gives a tool result that has only structuredContent a text block with its JSON", () => {
    const result = { content: [], structuredContent: { temperature: 21 } };
    expect(resultForRev2024("2024-11-05", "tools/call", result)).toEqual({
      content: [{ type: "text", text: '{"temperature":21}' }],
      structuredContent: { temperature: 21 },
    });
  });

  it("turns audio into a text block that says it was left out, in tool and prompt results", () => {
    const audio = { type: "audio", data: "AAAA", mimeType: "audio/wav" };
    const tool = resultForRev2024("2024-11-05", "tools/call", { content: [audio] }) as {
      content: Array<{ type: string; text: string }>;
    };
    expect(tool.content[0]?.type).toBe("text");
    expect(tool.content[0]?.text).toContain("audio/wav");
    const prompt = resultForRev2024("2024-11-05", "prompts/get", {
      messages: [{ role: "user", content: audio }],
    }) as { messages: Array<{ content: { type: string } }> };
    expect(prompt.messages[0]?.content.type).toBe("text");
  });

  it("leaves results of newer clients and results with 2024 blocks as they are", () => {
    const result = { content: [{ type: "audio", data: "AAAA", mimeType: "audio/wav" }] };
    expect(resultForRev2024("2025-03-26", "tools/call", result)).toBe(result);
    const plain = { content: [{ type: "text", text: "hi" }], structuredContent: { a: 1 } };
    expect(resultForRev2024("2024-11-05", "tools/call", plain)).toBe(plain);
  });
});
