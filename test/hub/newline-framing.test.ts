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

describe("LineSplitter.pushBytes", () => {
  /** Feeds `chunks` through one reused buffer, as a pipe reader does. */
  function splitBytes(chunks: Buffer[], max = 64): { lines: string[]; oversize: number } {
    const lines: string[] = [];
    let oversize = 0;
    const splitter = new LineSplitter(
      (l) => lines.push(l),
      max,
      () => oversize++,
    );
    const reused = Buffer.alloc(64);
    for (const chunk of chunks) {
      chunk.copy(reused);
      splitter.pushBytes(reused, chunk.length);
      reused.fill(0x21);
    }
    return { lines, oversize };
  }

  it("decodes a character split between two reads, and keeps what came before a reused buffer", () => {
    const bytes = Buffer.from("ab\nhé😀llo\nc");
    const cut = bytes.indexOf(Buffer.from("é")) + 1;
    const { lines } = splitBytes([bytes.subarray(0, cut), bytes.subarray(cut), Buffer.from("d\n")]);
    expect(lines).toEqual(["ab", "hé😀llo", "cd"]);
  });

  it("drops an oversized message counted in bytes, and goes on", () => {
    const { lines, oversize } = splitBytes(
      [Buffer.from("ok\n0123456789"), Buffer.from("ABCDEFGHIJ"), Buffer.from("tail\nnext\n")],
      10,
    );
    expect(oversize).toBe(1);
    expect(lines).toEqual(["ok", "next"]);
  });
});
