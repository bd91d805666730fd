import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Connection,
  connect,
  connectCommand,
  removeTree,
  tempDir,
  textOf,
  writeTree,
} from "./helpers.js";

interface TreeNode {
  name: string;
  type: "file" | "directory";
  children?: TreeNode[];
}

function flatten(nodes: TreeNode[], prefix = ""): string[] {
  return nodes.flatMap((n) => {
    const rel = prefix + n.name;
    return [`${n.type}:${rel}`, ...(n.children ? flatten(n.children, `${rel}/`) : [])];
  });
}

describe("side by side with @modelcontextprotocol/server-filesystem", () => {
  let root: string;
  let ours: Connection;
  let reference: Connection;

  beforeAll(async () => {
    root = await tempDir("mcplex-parity-");
    await writeTree(root, {
      "README.md": "# Parity\n",
      "src/main.ts": "console.log('hi');\n",
      "src/lib/deep/value.json": '{ "a": [1, 2, 3] }\n',
      "docs/unicode.txt": "héllo wörld — ✓\n",
      "docs/empty.txt": "",
      "crlf.txt": "one\r\ntwo\r\n",
      "no-newline.txt": "last line",
    });
    [ours, reference] = await Promise.all([
      connect(root, { era: "2025" }),
      connectCommand(path.resolve("node_modules/.bin/mcp-server-filesystem"), [root], "2025"),
    ]);
  });
  afterAll(async () => {
    await Promise.all([ours?.close(), reference?.close()]);
    await removeTree(root);
  });

  it("lists the same files and directories", async () => {
    const tree = await reference.client.callTool({ name: "directory_tree", arguments: { path: root } });
    const expected = flatten(JSON.parse(textOf(tree)) as TreeNode[]).sort();
    const listing = await ours.client.callTool({
      name: "list_directory",
      arguments: { path: ".", depth: 20 },
    });
    const actual = (listing.structuredContent as any).entries.map((e: any) => `${e.type}:${e.path}`).sort();
    expect(actual).toEqual(expected);
    expect(actual).toHaveLength(11);
  });

  it("lists the same top-level entries as the reference list_directory", async () => {
    const theirs = await reference.client.callTool({ name: "list_directory", arguments: { path: root } });
    const mine = await ours.client.callTool({ name: "list_directory", arguments: { path: "." } });
    const norm = (text: string) =>
      text
        .split("\n")
        .map((l) => l.replace(/ \(\d+ bytes\)$/, ""))
        .sort();
    expect(norm(textOf(mine))).toEqual(norm(textOf(theirs)));
  });

  it("reads every file with the same contents", async () => {
    const tree = await reference.client.callTool({ name: "directory_tree", arguments: { path: root } });
    const files = flatten(JSON.parse(textOf(tree)) as TreeNode[])
      .filter((e) => e.startsWith("file:"))
      .map((e) => e.slice(5));
    expect(files.length).toBe(7);
    for (const rel of files) {
      const theirs = await reference.client.callTool({
        name: "read_text_file",
        arguments: { path: path.join(root, rel) },
      });
      const mine = await ours.client.callTool({ name: "read_file", arguments: { path: rel } });
      expect(mine.isError, rel).toBeFalsy();
      expect((mine.structuredContent as any).content, rel).toBe((theirs.structuredContent as any).content);
    }
  });
});
