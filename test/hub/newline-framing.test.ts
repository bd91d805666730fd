import { describe, expect, it } from "vitest";
import { LineSplitter } from "../../src/protocol/newline-framing.js";

function split(chunks: string[], max = 10): { lines: string[]; oversize: number } {
  const lines: string[] = [];
  let oversize = 0;
  const splitter = new LineSplitter(
    (l) => lines.push(l),
    max,
    () => oversize++,
  );
  for (const chunk of chunks) splitter.push(chunk);
  return { lines, oversize };
}

describe("LineSplitter", () => {
  it("gives whole lines whatever the chunk boundaries, skipping empty ones", () => {
    expect(split(["a", "b\nc", "d\n\n", "e\n"]).lines).toEqual(["ab", "cd", "e"]);
  });

  it("drops an oversized message whole, the part that arrives later too, and goes on", () => {
    const { lines, oversize } = split(["ok\n0123456789", "ABCDEFGHIJ", "tail\nnext\n"]);
    expect(oversize).toBe(1);
    expect(lines).toEqual(["ok", "next"]);
  });
});
