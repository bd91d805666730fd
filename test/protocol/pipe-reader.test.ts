import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { takeOverPipe } from "../../src/protocol/newline-framing.js";

// A child's output read below Node's streams, as the stdio transport does: nothing it wrote is
// lost on the way, and the child still ends as a child does.

/** A child that writes `first` at once, then echoes each line it reads, and exits at the end of its input. */
function echoChild() {
  const script = `process.stdout.write("first\\n");
process.stdin.on("data", (chunk) => process.stdout.write(chunk));
process.stdin.on("end", () => process.exit(0));`;
  return spawn(process.execPath, ["-e", script], { stdio: ["pipe", "pipe", "inherit"] });
}

describe("takeOverPipe", () => {
  it("hands over what the stream read before, then every read, and the child still closes", async () => {
    const child = echoChild();
    // The stream has read the first line before the takeover (as for a process spawned ahead).
    await once(child.stdout, "readable");
    let text = "";
    let lines = 0;
    let sawLines: () => void = () => {};
    const taken = takeOverPipe(child.stdout, (buffer, length) => {
      text += buffer.toString("utf8", 0, length);
      lines = text.split("\n").length - 1;
      if (lines === 3) sawLines();
    });
    expect(taken).toBeDefined();
    const three = new Promise<void>((resolve) => {
      sawLines = resolve;
    });
    child.stdin.write("second\nthé 😀\n");
    await three;
    expect(text).toBe("first\nsecond\nthé 😀\n");
    const closed = once(child, "close");
    child.stdin.end();
    const [code] = await closed;
    expect(code).toBe(0);
  });

  it("leaves a stream that has ended as it is", async () => {
    const child = spawn(process.execPath, ["-e", ""], { stdio: ["ignore", "pipe", "ignore"] });
    child.stdout.resume();
    await once(child.stdout, "end");
    expect(takeOverPipe(child.stdout, () => {})).toBeUndefined();
    await once(child, "close");
  });
});
