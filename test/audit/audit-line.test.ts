import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { cappedLine } from "../../src/audit/audit-line.js";

// One audit line is capped in bytes, stays JSON, and says of each field it cut how long it was,
// its digest and how it began: evidence that a long field was there, not the field.

const MAX = 16 * 1024;
const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const parsed = (line: string) => {
  expect(line.endsWith("\n")).toBe(true);
  expect(Buffer.byteLength(line)).toBeLessThanOrEqual(MAX);
  return JSON.parse(line) as Record<string, unknown>;
};

describe("cappedLine", () => {
  it("writes a record that fits as it is", () => {
    const record = { method: "tools/call", target: "fx__echo", arguments: { message: "é".repeat(1000) } };
    expect(cappedLine(record, MAX)).toBe(`${JSON.stringify(record)}\n`);
  });

  it("cuts a long string to its length, digest and head, keeping the rest", () => {
    const name = "n".repeat(100_000);
    const line = parsed(cappedLine({ method: "tools/call", target: name, requestId: 7 }, MAX));
    expect(line).toEqual({
      method: "tools/call",
      target: { cut: true, length: 100_000, sha256: sha(name), head: "n".repeat(256) },
      requestId: 7,
    });
  });

  it("cuts content whole when many short strings are too long together, and long keys with it", () => {
    const args = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, "v".repeat(100)]));
    const line = parsed(cappedLine({ method: "tools/call", arguments: args }, MAX));
    expect(line.arguments).toMatchObject({
      cut: true,
      length: JSON.stringify(args).length,
      sha256: sha(JSON.stringify(args)),
    });
    const keyed = parsed(cappedLine({ method: "tools/call", result: { ["k".repeat(200_000)]: 1 } }, MAX));
    expect(keyed.result).toMatchObject({ cut: true, length: 200_006 });
  });

  it("fits with every field long, multi-byte and full of characters JSON escapes", () => {
    const long = (c: string) => c.repeat(50_000);
    const record = Object.fromEntries(
      [
        "time",
        "subject",
        "via",
        "issuer",
        "client",
        "front",
        "method",
        "target",
        "server",
        "outcome",
        "traceId",
        "sessionId",
        "requestId",
      ].map((key, i) => [key, long(["\u0001", "😀", "é", '"'][i % 4]!)]),
    );
    parsed(
      cappedLine(
        {
          ...record,
          arguments: long("\u0002"),
          result: [long("x")],
          error: { code: 1, message: long("\u0003") },
        },
        MAX,
      ),
    );
  });

  it("does not cut a surrogate pair in half, and keeps a __proto__ key a key", () => {
    const target = `${"a".repeat(255)}😀${"b".repeat(20_000)}`;
    const args = JSON.parse(`{"__proto__": "${"x".repeat(20_000)}"}`) as object;
    const line = parsed(cappedLine({ target, arguments: args }, MAX));
    expect((line.target as { head: string }).head).toBe("a".repeat(255));
    expect(Object.keys(line.arguments as object)).toEqual(["__proto__"]);
  });
});
