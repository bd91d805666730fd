/**
 * The hub's transport contract: one suite that every transport (and every kind of peer on it)
 * passes. Each `*.test.ts` beside this file imports {@link transportContract} and runs it
 * against real peers over real I/O.
 *
 * Peers differ in what they can do, so a contract lists its peer's abilities: parts whose
 * ability is absent (no slow tool → no progress/timeout/abort tests; no resource; no prompt;
 * no way to see a cancellation on the server) are not registered for that peer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXPOSED_NAME_PATTERN } from "../../../src/catalog/tool-naming.js";
import type { McplexConfig, ServerConfig, TransportKind } from "../../../src/config/types.js";
import { AbortedError, NotFoundError, TimeoutError, UpstreamUnavailableError } from "../../../src/errors.js";
import { Hub, type ServerStatus } from "../../../src/hub/hub.js";
import type { Progress } from "../../../src/protocol/rpc-connection.js";
import { within } from "../../support/wait.js";

/** Tags the suite calls with: one for single calls, twenty for the concurrent ones. */
export const CONTRACT_TAGS = ["hello", ...Array.from({ length: 20 }, (_, i) => `call-${i}`)];

/** A tool call whose answer names the tag it was called with. */
export interface TaggedCall {
  tool: string;
  args(tag: string): Record<string, unknown>;
  /** The answer's text for `tag`. */
  text(tag: string): string | RegExp;
}

/** A tool that runs `ms` milliseconds, reporting progress every `stepMs` when asked to. */
export interface SlowCall {
  tool: string;
  args(ms: number, stepMs: number, tag: string): Record<string, unknown>;
  /** The peer lets a test see the cancellations it received (`PeerSession.cancelled`). */
  observesCancellation?: boolean;
}

/** A peer started for one suite. */
export interface PeerSession {
  /** The server entry the hub gets (all fields, name included). */
  server: ServerConfig;
  /** Resolves when the server saw the cancellation of the slow call tagged `tag`. Absent: cannot tell. */
  cancelled?(tag: string): Promise<void>;
  /**
   * Called just before `hub.close()`; resolves to a wait that resolves once nothing the hub
   * opened for this server is still running (child processes gone, connections and HTTP
   * exchanges ended).
   */
  watchRelease(hub: Hub, status: ServerStatus): Promise<() => Promise<void>>;
  /** Stops the peer itself (remote servers); after the hub is closed. */
  stop(): Promise<void>;
}

export interface TransportContract {
  /** What is under test, e.g. `stdio: fixture server, dual-era`. */
  label: string;
  /** The revision the hub must negotiate. */
  protocolVersion: string;
  /** The transport `hub.servers()` must report (`sse` after a Streamable HTTP fallback). */
  transport: TransportKind;
  echo: TaggedCall;
  /** A call that the server answers with a tool error. */
  toolError: { tool: string; args: Record<string, unknown> };
  slow?: SlowCall;
  resource?: { uri: string; text: string | RegExp };
  prompt?: { name: string; args: Record<string, string>; text: string | RegExp };
  /** Starts the peer; called once per suite. */
  start(): Promise<PeerSession>;
}

/** Bound on waits for events the suite expects (never a sleep: the wait ends on the event). */
const EVENT_MS = 10_000;

function text(result: { content?: unknown }): string {
  return ((result.content ?? []) as Array<{ type: string; text?: string }>).map((c) => c.text ?? "").join("");
}

function configOf(server: ServerConfig): McplexConfig {
  return { source: "test", format: "mcplex", profiles: {}, tokens: [], secrets: [], servers: [server] };
}

/** Runs the transport contract against one peer. */
export function transportContract(contract: TransportContract): void {
  const { slow, resource, prompt } = contract;
  // A peer without a feature has no test for it at all (rather than a skipped one).
  const none = (() => {}) as unknown as typeof it;
  const whenSlow = slow === undefined ? none : it;
  const whenCancellationObservable = slow?.observesCancellation === true ? it : none;
  const whenResource = resource === undefined ? none : it;
  const whenPrompt = prompt === undefined ? none : it;

  describe(contract.label, () => {
    let session: PeerSession;
    let hub: Hub;
    let name: string;
    const exposed = (tool: string) => {
      const found = hub.tools().find((t) => t.server === name && t.originalName === tool);
      if (found === undefined) throw new Error(`tool ${tool} of ${name} is not in the catalog`);
      return found.name;
    };

    beforeAll(async () => {
      session = await contract.start();
      name = session.server.name;
      hub = new Hub({ config: configOf(session.server) });
      await hub.start();
    });
    afterAll(async () => {
      await hub?.close();
      await session?.stop();
    });

    it(`starts and reports the server ready on ${contract.transport} with protocol ${contract.protocolVersion}`, () => {
      const [status] = hub.servers();
      expect(status?.error).toBeUndefined();
      expect(status).toMatchObject({
        name,
        state: "ready",
        transport: contract.transport,
        protocolVersion: contract.protocolVersion,
      });
      expect(status?.tools).toBeGreaterThan(0);
    });

    it("lists tools as server__tool names that map back to the original names", () => {
      const tools = hub.tools();
      expect(tools.length).toBeGreaterThan(0);
      for (const tool of tools) {
        expect(tool.server).toBe(name);
        expect(tool.name).toMatch(EXPOSED_NAME_PATTERN);
        expect(tool.name.startsWith(`${name}__`)).toBe(true);
        expect(tool.available).toBe(true);
        const back = hub.catalog.resolveTool(tool.name);
        expect(back).toMatchObject({ server: name, originalName: tool.originalName });
      }
      const originals = tools.map((t) => t.originalName);
      expect(originals).toContain(contract.echo.tool);
      expect(originals).toContain(contract.toolError.tool);
      if (slow !== undefined) expect(originals).toContain(slow.tool);
      expect(exposed(contract.echo.tool)).toBe(`${name}__${contract.echo.tool}`);
    });

    it("calls a tool and resolves with its result", async () => {
      const result = await hub.callTool(exposed(contract.echo.tool), contract.echo.args("hello"));
      expect(result.isError).not.toBe(true);
      expect(text(result)).toMatch(contract.echo.text("hello"));
    });

    it("resolves a tool error as an isError result rather than rejecting", async () => {
      const result = await hub.callTool(exposed(contract.toolError.tool), contract.toolError.args);
      expect(result.isError).toBe(true);
      expect(text(result)).not.toBe("");
    });

    it("rejects an unknown tool with NotFoundError", async () => {
      const call = hub.callTool(`${name}__no_such_tool`, {});
      await expect(call).rejects.toBeInstanceOf(NotFoundError);
      await expect(call).rejects.toMatchObject({ code: "TOOL_NOT_FOUND" });
    });

    whenSlow(
      "delivers progress to onProgress, and progress keeps a call alive past its timeout",
      async () => {
        const seen: Progress[] = [];
        // 1.5 s of work with progress every 150 ms, under a 1 s timeout: only progress saves it.
        const result = await hub.callTool(exposed(slow!.tool), slow!.args(1500, 150, "progress"), {
          timeout: 1000,
          onProgress: (progress) => seen.push(progress),
        });
        expect(result.isError).not.toBe(true);
        expect(seen.length).toBeGreaterThan(0);
        const values = seen.map((p) => p.progress);
        expect(values).toEqual([...values].sort((a, b) => a - b));
      },
    );

    whenSlow(
      "rejects a call that outlives its timeout without progress with a TimeoutError naming the server",
      async () => {
        // No onProgress, so no progress token: the server works on silently past the timeout.
        const call = hub.callTool(exposed(slow!.tool), slow!.args(4000, 100, "timeout"), { timeout: 250 });
        const error = await call.then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(TimeoutError);
        expect(error).toMatchObject({ code: "REQUEST_TIMEOUT", server: name });
        expect((error as Error).message).toContain(name);
      },
    );

    whenCancellationObservable("forwards the cancellation of a timed-out call to the server", async () => {
      const call = hub.callTool(exposed(slow!.tool), slow!.args(30_000, 100, "timed-out"), {
        timeout: 250,
      });
      await expect(call).rejects.toBeInstanceOf(TimeoutError);
      await within(session.cancelled!("timed-out"), EVENT_MS, "the server to see the cancellation");
    });

    whenSlow("rejects an aborted call with AbortedError without waiting for the tool", async () => {
      const controller = new AbortController();
      // The tool would run far longer than the call's timeout: only the abort can end it in time.
      const call = hub.callTool(exposed(slow!.tool), slow!.args(30_000, 100, "abort"), {
        timeout: 20_000,
        signal: controller.signal,
        onProgress: () => controller.abort(new Error("the caller gave up")),
      });
      const error = await within(
        call.then(
          () => undefined,
          (e: unknown) => e,
        ),
        EVENT_MS,
        "the aborted call to settle",
      );
      expect(error).toBeInstanceOf(AbortedError);
      expect(error).toMatchObject({ code: "REQUEST_ABORTED", server: name });
    });

    whenCancellationObservable("forwards the cancellation of an aborted call to the server", async () => {
      const controller = new AbortController();
      const call = hub.callTool(exposed(slow!.tool), slow!.args(30_000, 100, "cancel"), {
        timeout: 20_000,
        signal: controller.signal,
        onProgress: () => controller.abort(),
      });
      await expect(call).rejects.toBeInstanceOf(AbortedError);
      await within(session.cancelled!("cancel"), EVENT_MS, "the server to see the cancellation");
    });

    it("answers 20 concurrent calls each with its own result", async () => {
      const tags = CONTRACT_TAGS.filter((t) => t.startsWith("call-"));
      const results = await Promise.all(
        tags.map((tag) => hub.callTool(exposed(contract.echo.tool), contract.echo.args(tag))),
      );
      results.forEach((result, i) => {
        expect(result.isError).not.toBe(true);
        expect(text(result)).toMatch(contract.echo.text(tags[i]!));
      });
    });

    whenResource("reads a resource through the hub", async () => {
      const result = await hub.readResource(resource!.uri);
      const [first] = result.contents;
      expect(first?.uri).toBe(resource!.uri);
      expect(first !== undefined && "text" in first ? first.text : "").toMatch(resource!.text);
    });

    whenPrompt("gets a prompt through the hub", async () => {
      const prompts = hub.prompts().filter((p) => p.originalName === prompt!.name);
      expect(prompts).toHaveLength(1);
      const result = await hub.getPrompt(prompts[0]!.name, prompt!.args);
      const texts = result.messages.map((m) => ("text" in m.content ? m.content.text : "")).join("\n");
      expect(texts).toMatch(prompt!.text);
    });

    // Last on purpose: it closes the suite's hub.
    it("close() stops the server, leaves nothing running and is safe to call twice", async () => {
      const [status] = hub.servers();
      expect(status?.state).toBe("ready");
      const released = await session.watchRelease(hub, status!);
      await hub.close();
      expect(hub.servers()[0]?.state).toBe("stopped");
      await hub.close();
      await within(released(), EVENT_MS, `what the hub opened for ${name} to end`);
      const call = hub.callTool(exposed(contract.echo.tool), contract.echo.args("hello"));
      await expect(call).rejects.toBeInstanceOf(UpstreamUnavailableError);
    });
  });
}
