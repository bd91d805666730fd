import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postRev2026, rev2026Request, type ServeProcess, serveHttp } from "../support/gateway.js";

/**
 * Two servers publishing skills of the same names (the hand-written skills fixture as "alpha",
 * a 2026 server, and as "beta", a 2025 one) behind `mcplex serve --http`, read by a client that
 * knows nothing of mcplex: raw 2026 POSTs, its own SHA-256.
 */
const TOKEN = "alpha-only-token-0123456789";
const OPEN = "open-token-0123456789abcdef";
let served: ServeProcess;
let dir: string;
let id = 0;

async function call(method: string, params: Record<string, unknown> = {}, token = OPEN) {
  const headers = { authorization: `Bearer ${token}` };
  const res = await postRev2026(served.url, rev2026Request(++id, method, params), headers);
  return res.json as { result?: Record<string, unknown>; error?: { code: number; message: string } };
}

interface Entry {
  uri: string;
  frontmatter: { name: string };
  resources: Array<{ uri: string; digest: string; size: number }>;
}

async function listAll(token = OPEN): Promise<{ entries: Entry[]; pages: number }> {
  const entries: Entry[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await call("skills/list", cursor === undefined ? {} : { cursor }, token);
    expect(page.error).toBeUndefined();
    entries.push(...(page.result!.skills as Entry[]));
    cursor = page.result!.nextCursor as string | undefined;
    pages++;
  } while (cursor !== undefined && pages < 50);
  return { entries, pages };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-skills-two-"));
  const server = resolve("test/fixtures/servers/skills-server.mjs");
  const config = join(dir, "mcplex.yaml");
  await writeFile(
    config,
    [
      "servers:",
      "  alpha:",
      `    command: ${process.execPath}`,
      `    args: [${server}, --origin, alpha]`,
      "  beta:",
      `    command: ${process.execPath}`,
      `    args: [${server}, --origin, beta, --legacy, --page-size, "1"]`,
      "profiles:",
      "  alpha-only: { servers: [alpha] }",
      "  open: {}",
      "tokens:",
      `  - { token: ${TOKEN}, profile: alpha-only }`,
      `  - { token: ${OPEN}, profile: open }`,
      "",
    ].join("\n"),
  );
  served = await serveHttp(["--config", config]);
}, 60_000);
afterAll(async () => {
  await served?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe("skills of two servers with the same names through the gateway", () => {
  it("lists both servers' skills under skill://<server>/..., each entry whole on one page", async () => {
    const { entries, pages } = await listAll(OPEN);
    expect(entries.map((e) => e.uri)).toEqual([
      "skill://alpha/pdf-processing/SKILL.md",
      "skill://alpha/git-workflow/SKILL.md",
      "skill://alpha/acme/billing/refunds/SKILL.md",
      "skill://beta/pdf-processing/SKILL.md",
      "skill://beta/git-workflow/SKILL.md",
      "skill://beta/acme/billing/refunds/SKILL.md",
    ]);
    // alpha pages by two, beta by one: five pages, never an entry split across two.
    expect(pages).toBe(5);
    for (const entry of entries) {
      expect(entry.uri.split("/").at(-2)).toBe(entry.frontmatter.name);
      const root = entry.uri.slice(0, -"/SKILL.md".length);
      for (const file of entry.resources) expect(file.uri.startsWith(`${root}/`)).toBe(true);
    }
  });

  it("reads every file of both, and every digest and size matches the bytes", async () => {
    const { entries } = await listAll(OPEN);
    const bodies = new Map<string, string>();
    for (const entry of entries) {
      for (const file of entry.resources) {
        const read = await call("resources/read", { uri: file.uri }, OPEN);
        const [content] = read.result!.contents as Array<{ uri: string; text: string }>;
        expect(content!.uri).toBe(file.uri);
        const bytes = Buffer.from(content!.text, "utf8");
        expect(bytes.byteLength, file.uri).toBe(file.size);
        expect(`sha256:${createHash("sha256").update(bytes).digest("hex")}`, file.uri).toBe(file.digest);
        bodies.set(file.uri, content!.text);
      }
    }
    expect(bodies.get("skill://alpha/pdf-processing/SKILL.md")).toContain("Served by alpha.");
    expect(bodies.get("skill://beta/pdf-processing/SKILL.md")).toContain("Served by beta.");
    expect(bodies.size).toBe(14);
  });

  it("gets one skill by URI and lists a directory, from the server the URI names", async () => {
    const got = await call("skills/get", { uri: "skill://beta/pdf-processing/SKILL.md" });
    const skill = got.result!.skill as Entry;
    expect(skill.uri).toBe("skill://beta/pdf-processing/SKILL.md");
    expect(skill.resources.map((f) => f.uri)).toContain("skill://beta/pdf-processing/references/FORMS.md");
    expect(got.result!.ttlMs).toBe(0);
    const dirRead = await call("resources/directory/read", { uri: "skill://alpha/pdf-processing/templates" });
    expect(dirRead.result!.resources).toEqual([
      {
        uri: "skill://alpha/pdf-processing/templates/invoice.md",
        name: "invoice.md",
        mimeType: "text/markdown",
      },
      {
        uri: "skill://alpha/pdf-processing/templates/regional",
        name: "regional",
        mimeType: "inode/directory",
      },
    ]);
    const unknown = await call("skills/get", { uri: "skill://gamma/pdf-processing/SKILL.md" });
    expect(unknown.error?.code).toBe(-32602);
  });

  it("declares the extension with directoryRead, since both servers read directories", async () => {
    const discover = await call("server/discover");
    expect((discover.result!.capabilities as { extensions?: unknown }).extensions).toMatchObject({
      "io.modelcontextprotocol/skills": { directoryRead: true },
    });
  });

  it("narrows skills by profile as it narrows resources", async () => {
    const { entries } = await listAll(TOKEN);
    expect(entries.map((e) => e.uri)).toEqual([
      "skill://alpha/pdf-processing/SKILL.md",
      "skill://alpha/git-workflow/SKILL.md",
      "skill://alpha/acme/billing/refunds/SKILL.md",
    ]);
    const hidden = await call("skills/get", { uri: "skill://beta/pdf-processing/SKILL.md" }, TOKEN);
    expect(hidden.error?.code).toBe(-32602);
    const read = await call("resources/read", { uri: "skill://beta/pdf-processing/SKILL.md" }, TOKEN);
    expect(read.error?.code).toBe(-32602);
  });

  it("refuses a cursor it did not give", async () => {
    const forged = await call("skills/list", { cursor: Buffer.from('["gamma"]').toString("base64url") });
    expect(forged.error?.code).toBe(-32602);
    expect(forged.error?.message).toContain("list again without a cursor");
  });
});
