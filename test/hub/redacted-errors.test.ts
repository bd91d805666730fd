import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import {
  AbortedError,
  ConfigError,
  McplexError,
  NotFoundError,
  RpcError,
  TimeoutError,
  UpstreamUnavailableError,
} from "../../src/errors.js";
import { Hub } from "../../src/hub/hub.js";
import { redactError } from "../../src/upstream/error-redaction.js";
import { redacted } from "../../src/upstream/upstream-errors.js";
import { WorkspaceError } from "../../src/workspace/workspace-error.js";
import { configOf, stdio } from "../support/config.js";

// An upstream may quote its token in anything it says: the copies that take the secret out
// must still be the error a program catches (class, code, fields, cause), only cleaner.
const SECRET = "ghp_secret123";
const hide = (text: string) => text.replaceAll(SECRET, "***");

/** Every message, stack, hint and data along the cause chain, as one text. */
function chainText(error: unknown): string {
  const parts: string[] = [];
  for (let e = error, depth = 0; e instanceof Error && depth < 40; e = e.cause, depth++) {
    const fields = e as { hint?: unknown; data?: unknown };
    parts.push(e.message, e.stack ?? "", String(fields.hint ?? ""), JSON.stringify(fields.data ?? null));
  }
  return parts.join("\n");
}

/** The McplexError classes an upstream failure may take, each with a secret in its message. */
function mcplexErrors(cause: Error) {
  return [
    new UpstreamUnavailableError(
      `server gh is failed: token ${SECRET} rejected`,
      { server: "gh", retryAt: 1234, hint: "check the token", transport: "stdio" },
      { cause },
    ),
    new TimeoutError(`gh: no answer to tools/call with ${SECRET} in 100 ms`, {
      server: "gh",
      tool: "search",
      hint: "raise servers.gh.timeout",
    }),
    new AbortedError(`gh: tools/call with ${SECRET} aborted`, { server: "gh", tool: "search" }, { cause }),
    new McplexError(
      "UPSTREAM_START_FAILED",
      `gh: failed to start: ${SECRET}`,
      { server: "gh", retryable: true, retryAt: 99 },
      { cause },
    ),
    new NotFoundError("TOOL_NOT_FOUND", `unknown tool "${SECRET}"`, { tool: "x", hint: "run `mcplex list`" }),
    new ConfigError(`servers.gh.env.TOKEN: ${SECRET} is not allowed`, {
      path: "servers.gh.env.TOKEN",
      issues: [{ code: "CONFIG_INVALID", path: "servers.gh.env.TOKEN", message: "bad" }],
    }),
    new WorkspaceError(
      "denied",
      `Access denied to '${SECRET}.txt'`,
      { path: "x.txt", rule: "rule #1" },
      { cause },
    ),
  ];
}

/** The fields a copy must keep, as they were. */
function fieldsOf(error: McplexError): Record<string, unknown> {
  const { code, server, tool, transport, path, hint, retryAt, retryable, name } = error;
  const extra = error as unknown as { reason?: unknown; rule?: unknown; issues?: unknown };
  return { code, server, tool, transport, path, hint, retryAt, retryable, name, ...extra };
}

describe.each([
  ["redacted()", (e: McplexError) => redacted(e, "gh", hide), "gh"],
  ["redactError()", (e: McplexError) => redactError(e, hide) as McplexError, undefined],
])("%s", (_, clean, server) => {
  it.each(mcplexErrors(new Error("spawn failed")).map((e) => [e.constructor.name, e] as const))(
    "keeps the class, code and fields of %s, with the secret out of message and stack",
    (_name, error) => {
      const copy = clean(error);
      expect(copy).not.toBe(error);
      expect(copy).toBeInstanceOf(error.constructor);
      expect(copy).toBeInstanceOf(McplexError);
      // redacted() also names the server a copy had none for.
      expect(fieldsOf(copy)).toEqual({ ...fieldsOf(error), server: error.server ?? server });
      expect(copy.message).toBe(error.message.replaceAll(SECRET, "***"));
      expect(copy.stack).toContain(copy.message);
      expect(chainText(copy)).not.toContain(SECRET);
    },
  );

  it("redacts the cause chain too, keeping each cause's class and fields", () => {
    const root = new RpcError(-32001, `token ${SECRET} refused`, { token: SECRET }, "gh");
    const middle = new McplexError(
      "UPSTREAM_START_FAILED",
      `gh: failed to start: ${SECRET}`,
      { server: "gh" },
      { cause: root },
    );
    const error = new UpstreamUnavailableError(
      `server gh is failed: ${SECRET}`,
      { server: "gh", retryAt: 5 },
      { cause: middle },
    );
    const copy = clean(error);
    expect(chainText(copy)).not.toContain(SECRET);
    const cause = copy.cause as McplexError;
    expect(cause).toBeInstanceOf(McplexError);
    expect(fieldsOf(cause)).toEqual(fieldsOf(middle));
    expect(cause.message).toBe("gh: failed to start: ***");
    const rpc = cause.cause as RpcError;
    expect(rpc).toBeInstanceOf(RpcError);
    expect(rpc).toMatchObject({
      code: -32001,
      server: "gh",
      data: { token: "***" },
      message: "token *** refused",
    });
  });

  it("redacts a cause that holds the secret when the message does not", () => {
    const error = new UpstreamUnavailableError(
      "server gh is failed",
      { server: "gh" },
      { cause: new Error(`exit: ${SECRET}`) },
    );
    const copy = clean(error);
    expect(copy).toBeInstanceOf(UpstreamUnavailableError);
    expect((copy.cause as Error).message).toBe("exit: ***");
    expect(chainText(copy)).not.toContain(SECRET);
  });

  it("redacts a hint that quotes the secret", () => {
    const error = new McplexError("UPSTREAM_UNAUTHORIZED", `gh: ${SECRET} refused`, {
      server: "gh",
      hint: `replace ${SECRET}`,
    });
    expect(clean(error).hint).toBe("replace ***");
  });

  it("keeps an error with nothing to hide as it is", () => {
    const error = new McplexError("UPSTREAM_CLOSED", "closed", { server: "gh" }, { cause: new Error("eof") });
    expect(clean(error)).toBe(error);
  });
});

describe("redacted()", () => {
  it("names the server on a copy that had none", () => {
    const copy = redacted(new TimeoutError(`no answer with ${SECRET}`), "gh", hide);
    expect(copy).toBeInstanceOf(TimeoutError);
    expect(copy.server).toBe("gh");
  });
});

describe("redactError()", () => {
  it("keeps an RpcError's class, code, server and data, with the secret out of message and data", () => {
    const error = new RpcError(-32001, `token ${SECRET} refused`, { token: SECRET, keep: 1 }, "gh");
    const copy = redactError(error, hide) as RpcError;
    expect(copy).toBeInstanceOf(RpcError);
    expect(copy).toMatchObject({
      code: -32001,
      server: "gh",
      name: "RpcError",
      message: "token *** refused",
    });
    expect(copy.data).toEqual({ token: "***", keep: 1 });
    expect(copy.toJSON()).toEqual({
      code: -32001,
      message: "token *** refused",
      data: { token: "***", keep: 1 },
    });
    expect(chainText(copy)).not.toContain(SECRET);
  });
});

describe("through a real hub", () => {
  it("a server that fails quoting its token fails its start with an McplexError with no secret anywhere along its causes", async () => {
    const leaky = resolve("test/fixtures/servers/leaky-server.mjs");
    const hub = new Hub({
      config: configOf(
        [stdio("crashy", process.execPath, [leaky, "--crash"], { env: { LEAK_TOKEN: SECRET } } as never)],
        { secrets: [SECRET] },
      ),
    });
    try {
      await hub.start();
      const error = (await hub.startServer("crashy").catch((e: unknown) => e)) as McplexError;
      expect(error).toBeInstanceOf(McplexError);
      expect(error.server).toBe("crashy");
      expect(error.retryable).toBe(true);
      expect(error.message).toContain("***");
      expect(chainText(error)).not.toContain(SECRET);
    } finally {
      await hub.close();
    }
  }, 60_000);
});
