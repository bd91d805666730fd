import { describe, expect, it } from "vitest";
import { type TextToolCallMode, TextToolCallParser } from "../../src/agent/text-tool-call-parser.js";

/** Feeds the text in pieces of `size` characters and collects everything. */
function run(text: string, size: number, mode: TextToolCallMode = "all") {
  const parser = new TextToolCallParser(mode);
  let shown = "";
  const calls = [];
  const outputs: string[] = [];
  for (let i = 0; i < text.length; i += size) {
    const out = parser.push(text.slice(i, i + size));
    shown += out.text;
    outputs.push(out.text);
    calls.push(...out.calls);
  }
  const end = parser.flush();
  shown += end.text;
  calls.push(...end.calls);
  return { shown, calls, outputs };
}

const SIZES = [1, 2, 3, 5, 7, 13, 1000];

describe("TextToolCallParser", () => {
  it.each(SIZES)("withholds <tool_call> blocks and extracts the call (pieces of %i)", (size) => {
    const text =
      'Let me check.\n<tool_call>\n{"name": "get_sum", "arguments": {"a": 1, "b": 2}}\n</tool_call>';
    const { shown, calls } = run(text, size);
    expect(shown).toBe("Let me check.\n");
    expect(calls).toMatchObject([{ name: "get_sum", input: { a: 1, b: 2 }, source: "text" }]);
  });

  it.each(SIZES)("withholds bare JSON calls and keeps the text around them (pieces of %i)", (size) => {
    const text =
      'Sure. {"name": "echo", "parameters": {"message": "a } b"}}\n{"name":"read_graph","arguments":{}} ok';
    const { shown, calls } = run(text, size);
    expect(shown).toBe("Sure. \n ok");
    expect(calls.map((c) => [c.name, c.input])).toEqual([
      ["echo", { message: "a } b" }],
      ["read_graph", {}],
    ]);
  });

  it.each(SIZES)("passes JSON that is not a tool call through as text (pieces of %i)", (size) => {
    const text = 'Here: {"name": "Ada", "age": 36} and {"x": [1, {"y": 2}]} and a < b <tool';
    const { shown, calls } = run(text, size);
    expect(shown).toBe(text);
    expect(calls).toEqual([]);
  });

  it("holds text back only while a prefix is undecided", () => {
    const parser = new TextToolCallParser();
    expect(parser.push("Hello <tool").text).toBe("Hello ");
    expect(parser.push("box>").text).toBe("<toolbox>");
    expect(parser.push(" {").text).toBe(" ");
    expect(parser.push('"na').text).toBe("");
    expect(parser.push('ughty": 1}').text).toBe('{"naughty": 1}');
    expect(parser.push("plain").text).toBe("plain");
  });

  it("parses an unclosed <tool_call> at the end of the stream", () => {
    const { shown, calls } = run('<tool_call>{"name": "echo", "arguments": {"message": "x"}}', 4);
    expect(shown).toBe("");
    expect(calls).toMatchObject([{ name: "echo", input: { message: "x" } }]);
  });

  it("reports an unparsable <tool_call> body as a call with bad arguments", () => {
    const { shown, calls } = run("<tool_call>{not json</tool_call>", 3);
    expect(shown).toBe("");
    expect(calls).toHaveLength(1);
    expect(calls[0]!.argumentsError).toBeDefined();
  });

  it("reads the OpenAI-style function wrapper and arrays of calls inside tags", () => {
    const text =
      '<tool_call>[{"function": {"name": "a", "arguments": "{\\"x\\":1}"}}, {"name": "b", "arguments": {}}]</tool_call>';
    const { calls } = run(text, 5);
    expect(calls.map((c) => [c.name, c.input])).toEqual([
      ["a", { x: 1 }],
      ["b", {}],
    ]);
  });

  it("leaves bare JSON alone in tags mode and everything alone in off mode", () => {
    const bare = '{"name": "echo", "arguments": {}}';
    expect(run(bare, 3, "tags")).toMatchObject({ shown: bare, calls: [] });
    const tagged = '<tool_call>{"name": "echo", "arguments": {}}</tool_call>';
    expect(run(tagged, 3, "off")).toMatchObject({ shown: tagged, calls: [] });
  });

  it("keeps multi-byte text intact", () => {
    const text = 'Grüße 👋🏽 — {"name": "echo", "arguments": {"message": "日本"}} fin';
    const { shown, calls } = run(text, 1);
    expect(shown).toBe("Grüße 👋🏽 —  fin");
    expect(calls[0]!.input).toEqual({ message: "日本" });
  });
});
