import { describe, expect, it } from "vitest";
import { stringifyMessage } from "../../src/protocol/messages.js";
import { jsonOf, RAW_MEMBERS, RawJson, readRawAnswer } from "../../src/protocol/raw-json.js";

/** A small seeded generator, so that a failure can be run again. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = ["a", "é", "😀", '"', "\\", "\n", "\t", "\u2028", "\u0000", "\u001f", " ", "/", "}", "]", ","];

function value(next: () => number, depth: number): unknown {
  const pick = Math.floor(next() * (depth > 3 ? 5 : 7));
  switch (pick) {
    case 0:
      return null;
    case 1:
      return next() < 0.5;
    case 2: {
      const numbers = [0, -0, 1, -1, 1.5, 1e21, -2.5e-7, 123456789, Number.MAX_SAFE_INTEGER];
      return numbers[Math.floor(next() * numbers.length)];
    }
    case 3:
    case 4: {
      let text = "";
      const length = Math.floor(next() * 6);
      for (let i = 0; i < length; i++) text += PIECES[Math.floor(next() * PIECES.length)];
      return text;
    }
    case 5:
      return Array.from({ length: Math.floor(next() * 4) }, () => value(next, depth + 1));
    default: {
      const object: Record<string, unknown> = {};
      const members = Math.floor(next() * 4);
      for (let i = 0; i < members; i++) object[String(value(next, 9))] = value(next, depth + 1);
      return object;
    }
  }
}

/** JSON text of `v` with spaces and tabs between some tokens, as a server may write it. */
function spaced(v: unknown, next: () => number): string {
  return JSON.stringify(v).replace(/[,:[\]{}]/g, (token) => {
    const pad = () => (next() < 0.2 ? (next() < 0.5 ? " " : "\t") : "");
    return pad() + token + pad();
  });
}

/** What JSON.parse makes of the line, or undefined when it throws. */
function parsed(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

describe("readRawAnswer", () => {
  it("keeps a tool result as the text it came in", () => {
    const line = '{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"hi"}]}}';
    const answer = readRawAnswer(line);
    expect(answer?.id).toBe(42);
    expect(answer?.result).toBeInstanceOf(RawJson);
    expect(answer?.result.text).toBe('{"content":[{"type":"text","text":"hi"}]}');
    expect(answer?.result.value()).toEqual({ content: [{ type: "text", text: "hi" }] });
  });

  it.each(RAW_MEMBERS)("reads a result with the raw member %s", (member) => {
    const value = member === "isError" ? false : [{ type: "text", text: member }];
    const line = `{"jsonrpc":"2.0","id":1,"result":{"content":[],${JSON.stringify(member)}:${JSON.stringify(value)}}}`;
    expect(readRawAnswer(line)?.result.value()).toEqual(JSON.parse(line).result);
  });

  it.each([
    ["members in another order", '{"result":{"content":[]},"id":0,"jsonrpc":"2.0"}'],
    ["spaces and tabs", ' { "jsonrpc" : "2.0" ,\t"id": 7, "result" : { "isError" : false } } '],
    [
      "every raw member",
      '{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"a":1},"isError":false,"contents":[],"description":"d","messages":[]}}',
    ],
    ["an empty result", '{"jsonrpc":"2.0","id":1,"result":{}}'],
    [
      "text blocks as the TypeScript SDK writes them",
      '{"result":{"content":[{"type":"text","text":"a\\"b"},{"type":"text","text":"\\u00e9"}],"isError":false},"jsonrpc":"2.0","id":12}',
    ],
    [
      "escapes",
      '{"jsonrpc":"2.0","id":1,"result":{"content":"\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\uD83D\\uDE00"}}',
    ],
  ])("reads %s", (_, line) => {
    const answer = readRawAnswer(line);
    expect(answer).toBeDefined();
    const whole = JSON.parse(line) as { id: number; result: unknown };
    expect(answer?.id).toBe(whole.id);
    expect(answer?.result.value()).toEqual(whole.result);
  });

  it.each([
    ["a tool error", '{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}'],
    ["a result with _meta", '{"jsonrpc":"2.0","id":1,"result":{"content":[],"_meta":{}}}'],
    ["an input_required result", '{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required"}}'],
    ["a list", '{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}'],
    ["an error answer", '{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}'],
    ["an id with a leading zero", '{"jsonrpc":"2.0","id":01,"result":{"content":[]}}'],
    [
      "text with a raw control character",
      '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a\u0001"}]}}',
    ],
    [
      "text with a bad escape",
      '{"result":{"content":[{"type":"text","text":"\\q"}]},"jsonrpc":"2.0","id":1}',
    ],
    ["a string id", '{"jsonrpc":"2.0","id":"1","result":{}}'],
    ["a fractional id", '{"jsonrpc":"2.0","id":1.5,"result":{}}'],
    ["an id past 2^53", '{"jsonrpc":"2.0","id":9007199254740993,"result":{}}'],
    ["a duplicated result", '{"jsonrpc":"2.0","id":1,"result":{},"result":{"content":[]}}'],
    ["another member", '{"jsonrpc":"2.0","id":1,"result":{},"extra":1}'],
    ["a missing id", '{"jsonrpc":"2.0","result":{}}'],
    ["another version", '{"jsonrpc":"1.0","id":1,"result":{}}'],
    ["a carriage return between tokens", '{"jsonrpc":"2.0","id":1,"result":{"content":\r[]}}'],
    ["a trailing carriage return", '{"jsonrpc":"2.0","id":1,"result":{}}\r'],
    ["a raw control character in a string", '{"jsonrpc":"2.0","id":1,"result":{"content":"a\u0001"}}'],
    ["a bad escape", '{"jsonrpc":"2.0","id":1,"result":{"content":"\\x"}}'],
    ["a leading zero", '{"jsonrpc":"2.0","id":1,"result":{"content":[01]}}'],
    ["a trailing comma", '{"jsonrpc":"2.0","id":1,"result":{"content":[1,]}}'],
    ["text after the object", '{"jsonrpc":"2.0","id":1,"result":{}} x'],
    [
      "a result nested deeper than it follows",
      `{"jsonrpc":"2.0","id":1,"result":{"content":${"[".repeat(80)}${"]".repeat(80)}}}`,
    ],
  ])("leaves %s to JSON.parse", (_, line) => {
    expect(readRawAnswer(line)).toBeUndefined();
  });

  it("vouches only for what JSON.parse reads the same way (5000 random answers, half of them broken)", () => {
    const next = random(22);
    let read = 0;
    for (let round = 0; round < 5000; round++) {
      const result: Record<string, unknown> = {};
      let line: string;
      const id = Math.floor(next() * 1000);
      if (next() < 0.4) {
        // Text blocks, written as servers write them (the reader's fastest case), either order.
        result.content = Array.from({ length: Math.floor(next() * 3) }, () => ({
          type: "text",
          text: String(value(next, 9)),
        }));
        if (next() < 0.3) result.isError = false;
        line = JSON.stringify(next() < 0.5 ? { jsonrpc: "2.0", id, result } : { result, jsonrpc: "2.0", id });
      } else {
        if (next() < 0.8) result.content = value(next, 1);
        if (next() < 0.3) result.structuredContent = value(next, 1);
        if (next() < 0.2) result.isError = false;
        line = spaced({ jsonrpc: "2.0", id, result }, next);
      }
      // Break some: a character dropped, doubled or replaced by one that matters to JSON.
      if (next() < 0.5) {
        const at = Math.floor(next() * line.length);
        const piece = [...'{}[],:"\\0-.e \t\r'][Math.floor(next() * 16)]!;
        const kind = next();
        line =
          kind < 0.33
            ? line.slice(0, at) + line.slice(at + 1)
            : kind < 0.66
              ? line.slice(0, at) + piece + line.slice(at)
              : line.slice(0, at) + piece + line.slice(at + 1);
      }
      const answer = readRawAnswer(line);
      if (answer === undefined) continue;
      read++;
      const whole = parsed(line) as { jsonrpc: unknown; id: unknown; result: unknown } | undefined;
      expect(whole, line).toBeDefined();
      expect({ jsonrpc: "2.0", id: answer.id, result: answer.result.value() }, line).toEqual(whole);
      expect(Object.keys(whole!).sort()).toEqual(["id", "jsonrpc", "result"]);
    }
    // Most well-formed answers are read raw, not left to JSON.parse.
    expect(read).toBeGreaterThan(2000);
  });
});

describe("RawJson", () => {
  it("is written as its text by stringifyMessage and as its object by JSON.stringify", () => {
    const text = '{"content":[{"type":"text","text":"hi"}],  "isError":false}';
    const message = { jsonrpc: "2.0", id: 3, result: new RawJson(text) };
    expect(stringifyMessage(message)).toBe(`{"jsonrpc":"2.0","id":3,"result":${text}}`);
    expect(JSON.parse(JSON.stringify(message))).toEqual({ ...message, result: JSON.parse(text) });
  });

  it("reads as an object without the members a layer checks", () => {
    const result = new RawJson('{"content":[]}') as unknown as Record<string, unknown>;
    expect(result.isError).toBeUndefined();
    expect(result.resultType).toBeUndefined();
    expect(result._meta).toBeUndefined();
    expect(jsonOf(result)).toEqual({ content: [] });
    expect(jsonOf({ a: 1 })).toEqual({ a: 1 });
  });
});
