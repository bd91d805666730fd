import { describe, expect, it } from "vitest";
import { readDoc } from "./markdown-files.js";

const readme = readDoc("README.md");

/** The commands of the README's `sh` blocks that are one command alone. */
function shellCommands(text: string): string[] {
  return [...text.matchAll(/```sh\n([^\n]+)\n```/g)].map((m) => m[1]!);
}

describe("README.md", () => {
  it("stays short: under 250 lines", () => {
    expect(readme.split("\n").length).toBeLessThan(250);
  });

  it("gives the command that runs the main job and the one that runs the tests", () => {
    expect(shellCommands(readme)).toEqual(
      expect.arrayContaining(["npm install && npm start", "npm install && npm test"]),
    );
  });

  it("is what CI runs: .ci/run ends with exactly the README's test command", () => {
    const lines = readDoc(".ci/run").trimEnd().split("\n");
    expect(lines.at(-1)).toBe("npm install && npm test");
    expect(shellCommands(readme)).toContain(lines.at(-1));
  });

  it("links to the guide, the reference and the design notes", () => {
    for (const index of ["docs/guide/README.md", "docs/reference/README.md", "docs/design/README.md"]) {
      expect(readme).toContain(`](${index})`);
    }
  });
});
