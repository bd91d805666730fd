import { writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Connection,
  connect,
  ERAS,
  removeTree,
  standardTree,
  waitForEvent,
  writeTree,
} from "./helpers.js";

describe.each(ERAS)("workspace resources and prompts over stdio (%s protocol)", (era) => {
  let root: string;
  let conn: Connection;
  const uriOf = (rel: string) => pathToFileURL(path.join(root, rel)).href;

  beforeAll(async () => {
    root = await standardTree();
    // 230 files: more than one page of resources/list.
    const many: Record<string, string> = {};
    for (let i = 0; i < 230; i++) many[`many/f${String(i).padStart(3, "0")}.txt`] = `file ${i}\n`;
    await writeTree(root, many);
    conn = await connect(root, { era, allowWrite: true });
  });
  afterAll(async () => {
    await conn?.close();
    await removeTree(root);
  });

  it("lists files as file:// resources, paginated, without .git or ignored paths", async () => {
    // Without a cursor the SDK client walks every page itself; ask for the first page explicitly.
    const first = await conn.client.request({ method: "resources/list", params: {} });
    expect(first.resources).toHaveLength(200);
    expect(first.nextCursor).toBeTypeOf("string");
    const second = await conn.client.listResources({ cursor: first.nextCursor! });
    expect(second.nextCursor).toBeUndefined();
    const all = [...first.resources, ...second.resources];
    expect((await conn.client.listResources()).resources).toEqual(all);
    const names = all.map((r) => r.name);
    expect(names).toHaveLength(230 + 7);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(
      expect.arrayContaining(["README.md", "src/index.ts", "data/image.png", ".gitignore"]),
    );
    expect(names.some((n) => n.startsWith(".git/") || n.startsWith("ignored/") || n === "app.log")).toBe(
      false,
    );
    const readme = all.find((r) => r.name === "README.md")!;
    expect(readme).toMatchObject({ uri: uriOf("README.md"), mimeType: "text/markdown" });
    expect(all.find((r) => r.name === "src/index.ts")?.mimeType).toBe("text/x-typescript");
  });

  it("rejects a forged cursor", async () => {
    await expect(conn.client.listResources({ cursor: "not-a-cursor" })).rejects.toThrow(/Invalid cursor/);
  });

  it("reads a text file as text and a binary file as a base64 blob", async () => {
    const text = await conn.client.readResource({ uri: uriOf("src/index.ts") });
    expect(text.contents[0]).toMatchObject({
      uri: uriOf("src/index.ts"),
      mimeType: "text/x-typescript",
      text: 'export const greeting = "hello";\nexport const needle = 42;\n',
    });
    const blob = await conn.client.readResource({ uri: uriOf("data/image.png") });
    const content = blob.contents[0] as { blob: string; mimeType: string };
    expect(content.mimeType).toBe("image/png");
    expect(Buffer.from(content.blob, "base64")).toEqual(
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48]),
    );
  });

  it("refuses resources outside the root or under .git", async () => {
    await expect(
      conn.client.readResource({ uri: `${pathToFileURL(root).href}/..%2F..%2Fetc%2Fpasswd` }),
    ).rejects.toThrow(/outside the workspace root/);
    await expect(conn.client.readResource({ uri: "file:///etc/passwd" })).rejects.toThrow();
    await expect(conn.client.readResource({ uri: uriOf(".git/config") })).rejects.toThrow(
      /no access to .git/,
    );
    await expect(conn.client.readResource({ uri: uriOf("missing.txt") })).rejects.toThrow(
      /not found|does not exist/i,
    );
  });

  it("offers a resource template for paths, with completion", async () => {
    const { resourceTemplates } = await conn.client.listResourceTemplates();
    expect(resourceTemplates).toEqual([
      expect.objectContaining({ name: "workspace-file", uriTemplate: `${pathToFileURL(root).href}/{+path}` }),
    ]);
    const completion = await conn.client.complete({
      ref: { type: "ref/resource", uri: resourceTemplates[0]!.uriTemplate },
      argument: { name: "path", value: "src/" },
    });
    expect(completion.completion.values).toEqual(["src/index.ts", "src/util/"]);
  });

  it("sends notifications/resources/updated when a subscribed file changes on disk", async () => {
    const uri = uriOf("docs/guide.md");
    const updates: string[] = [];
    let deliver: ((uri: string) => void) | undefined;
    conn.client.setNotificationHandler("notifications/resources/updated", (n) => {
      updates.push(n.params.uri);
      deliver?.(n.params.uri);
    });
    let close: (() => Promise<void>) | undefined;
    if (era === "2025") {
      await conn.client.subscribeResource({ uri });
    } else {
      const sub = await conn.client.listen({ resourceSubscriptions: [uri] });
      expect(sub.honoredFilter.resourceSubscriptions).toEqual([uri]);
      close = () => sub.close();
    }
    const event = waitForEvent<string>(
      (d) => {
        deliver = d;
      },
      (u) => u === uri,
    );
    await writeFile(path.join(root, "docs/guide.md"), "changed on disk\n");
    await expect(event).resolves.toBe(uri);
    // A change through the server's own atomic write is seen too.
    const viaTool = waitForEvent<string>(
      (d) => {
        deliver = d;
      },
      (u) => u === uri,
    );
    await conn.client.callTool({
      name: "write_file",
      arguments: { path: "docs/guide.md", content: "via tool\n" },
    });
    await expect(viaTool).resolves.toBe(uri);
    expect(updates.every((u) => u === uri)).toBe(true);
    if (era === "2025") await conn.client.unsubscribeResource({ uri });
    else await close?.();
  });

  it("lists prompts with their arguments", async () => {
    const { prompts } = await conn.client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual([
      "explain_directory",
      "review_change",
      "summarize_file",
    ]);
    const review = prompts.find((p) => p.name === "review_change")!;
    expect(review.arguments?.map((a) => [a.name, a.required ?? false])).toEqual([
      ["path", true],
      ["diff", false],
      ["focus", false],
    ]);
  });

  it("summarize_file embeds the file as a resource", async () => {
    const result = await conn.client.getPrompt({
      name: "summarize_file",
      arguments: { path: "src/index.ts" },
    });
    expect(result.messages[0]?.content).toMatchObject({
      type: "resource",
      resource: { uri: uriOf("src/index.ts"), text: expect.stringContaining("greeting") },
    });
    expect(result.messages[1]?.content).toMatchObject({
      type: "text",
      text: expect.stringContaining("Summarize"),
    });
  });

  it("review_change includes the diff and focus", async () => {
    const result = await conn.client.getPrompt({
      name: "review_change",
      arguments: { path: "src/index.ts", diff: "-a\n+b", focus: "naming" },
    });
    const texts = result.messages.map((m) => (m.content.type === "text" ? m.content.text : ""));
    expect(texts.join("\n")).toContain("```diff\n-a\n+b\n```");
    expect(texts.join("\n")).toContain("Focus on: naming");
  });

  it("explain_directory shows the tree", async () => {
    const result = await conn.client.getPrompt({ name: "explain_directory", arguments: { path: "src" } });
    const text = result.messages[0]?.content.type === "text" ? result.messages[0].content.text : "";
    expect(text).toContain("index.ts\nutil/\n  strings.ts");
  });

  it("prompts refuse paths outside the root", async () => {
    await expect(
      conn.client.getPrompt({ name: "summarize_file", arguments: { path: "../../etc/passwd" } }),
    ).rejects.toThrow(/outside the workspace root/);
  });

  it("completes prompt path arguments", async () => {
    const files = await conn.client.complete({
      ref: { type: "ref/prompt", name: "summarize_file" },
      argument: { name: "path", value: "src/util/s" },
    });
    expect(files.completion.values).toEqual(["src/util/strings.ts"]);
    const top = await conn.client.complete({
      ref: { type: "ref/prompt", name: "explain_directory" },
      argument: { name: "path", value: "" },
    });
    expect(top.completion.values).toEqual(["data/", "docs/", "ignored/", "many/", "out/", "src/"]);
    const dot = await conn.client.complete({
      ref: { type: "ref/prompt", name: "summarize_file" },
      argument: { name: "path", value: ".g" },
    });
    expect(dot.completion.values).toEqual([".gitignore"]);
  });
});
