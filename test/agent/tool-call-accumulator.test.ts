import { describe, expect, it } from "vitest";
import { ToolCallAccumulator } from "../../src/agent/tool-call-accumulator.js";

function accumulate(...chunks: unknown[][]) {
  const acc = new ToolCallAccumulator();
  for (const chunk of chunks) acc.push(chunk as never);
  return acc.finish();
}

describe("ToolCallAccumulator", () => {
  it("joins fragments by index in OpenAI's standard shape", () => {
    const calls = accumulate(
      [{ index: 0, id: "call_a", type: "function", function: { name: "get_sum", arguments: "" } }],
      [{ index: 1, id: "call_b", type: "function", function: { name: "echo", arguments: "" } }],
      [{ index: 0, function: { arguments: '{"a":' } }],
      [{ index: 1, function: { arguments: '{"message":"hi"}' } }],
      [{ index: 0, function: { arguments: '1,"b":2}' } }],
    );
    expect(calls.map((c) => [c.id, c.name, c.input])).toEqual([
      ["call_a", "get_sum", { a: 1, b: 2 }],
      ["call_b", "echo", { message: "hi" }],
    ]);
  });

  it("tolerates a missing index by continuing the last call", () => {
    const calls = accumulate(
      [{ id: "call_a", function: { name: "one", arguments: '{"x"' } }],
      [{ function: { arguments: ":1}" } }],
      [{ id: "call_b", function: { name: "two", arguments: "{}" } }],
    );
    expect(calls.map((c) => [c.id, c.name, c.input])).toEqual([
      ["call_a", "one", { x: 1 }],
      ["call_b", "two", {}],
    ]);
  });

  it("tells calls apart by id when every call is at index 0", () => {
    const calls = accumulate(
      [{ index: 0, id: "call_a", function: { name: "one", arguments: '{"x":' } }],
      [{ index: 0, function: { arguments: "1}" } }],
      [{ index: 0, id: "call_b", function: { name: "two", arguments: '{"y":2}' } }],
    );
    expect(calls.map((c) => [c.id, c.name, c.input])).toEqual([
      ["call_a", "one", { x: 1 }],
      ["call_b", "two", { y: 2 }],
    ]);
  });

  it("takes whole calls in one chunk, even without index or id", () => {
    const calls = accumulate([
      { function: { name: "one", arguments: '{"x":1}' } },
      { function: { name: "two", arguments: '{"y":2}' } },
    ]);
    expect(calls.map((c) => [c.name, c.input])).toEqual([
      ["one", { x: 1 }],
      ["two", { y: 2 }],
    ]);
    expect(new Set(calls.map((c) => c.id)).size).toBe(2);
  });

  it("takes the name from a later fragment when the first has none", () => {
    const calls = accumulate(
      [{ index: 0, id: "call_a", type: "function", function: { arguments: "" } }],
      [{ index: 0, function: { name: "echo", arguments: '{"message":' } }],
      [{ index: 0, function: { arguments: '"x"}' } }],
    );
    expect(calls).toMatchObject([{ id: "call_a", name: "echo", input: { message: "x" } }]);
  });

  it("accepts arguments as an object instead of a string", () => {
    const calls = accumulate([
      { index: 0, id: "c1", function: { name: "echo", arguments: { message: "hi" } } },
    ]);
    expect(calls[0]).toMatchObject({ arguments: '{"message":"hi"}', input: { message: "hi" } });
  });

  it("reads empty arguments as {}", () => {
    const calls = accumulate([{ index: 0, id: "c1", function: { name: "read_graph", arguments: "" } }]);
    expect(calls[0]).toMatchObject({ arguments: "{}", input: {} });
    expect(calls[0]!.argumentsError).toBeUndefined();
  });

  it("mints unique ids for empty and duplicate ids", () => {
    const empty = accumulate(
      [{ index: 0, id: "", function: { name: "one", arguments: "{}" } }],
      [{ index: 1, id: "", function: { name: "two", arguments: "{}" } }],
    );
    expect(empty.every((c) => c.id.startsWith("call_"))).toBe(true);
    expect(new Set(empty.map((c) => c.id)).size).toBe(2);
    const dup = accumulate(
      [{ index: 0, id: "call_dup", function: { name: "one", arguments: "" } }],
      [{ index: 0, id: "call_dup", function: { arguments: "{}" } }],
      [{ index: 1, id: "call_dup", function: { name: "two", arguments: "" } }],
      [{ index: 1, id: "call_dup", function: { arguments: '{"y":1}' } }],
    );
    expect(dup.map((c) => [c.name, c.input])).toEqual([
      ["one", {}],
      ["two", { y: 1 }],
    ]);
    expect(new Set(dup.map((c) => c.id)).size).toBe(2);
  });

  it("reports invalid JSON arguments instead of throwing", () => {
    const calls = accumulate([
      { index: 0, id: "c1", function: { name: "echo", arguments: '{"message": "unterminated' } },
    ]);
    expect(calls[0]!.input).toBeUndefined();
    expect(calls[0]!.argumentsError).toMatch(/not valid JSON/);
  });

  it("reports arguments that are JSON but not an object", () => {
    const calls = accumulate([{ index: 0, id: "c1", function: { name: "echo", arguments: "[1,2]" } }]);
    expect(calls[0]!.argumentsError).toMatch(/must be a JSON object/);
  });

  it("decodes double-encoded arguments", () => {
    const calls = accumulate([
      { index: 0, id: "c1", function: { name: "echo", arguments: JSON.stringify('{"a":1}') } },
    ]);
    expect(calls[0]!.input).toEqual({ a: 1 });
  });

  it("ignores null and malformed fragment lists", () => {
    const acc = new ToolCallAccumulator();
    acc.push(null);
    acc.push(undefined);
    acc.push([null as never]);
    expect(acc.started).toBe(false);
    expect(acc.finish()).toEqual([]);
  });
});
