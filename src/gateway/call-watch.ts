import type { Hub } from "../hub/hub.js";

/** The requests a {@link CallWatcher} sees: the ones forwarded to a server. */
export const WATCHED_METHODS: ReadonlySet<string> = new Set([
  "tools/call",
  "resources/read",
  "prompts/get",
  "completion/complete",
]);

/** A forwarded request while it runs, as a dashboard shows it. */
export interface WatchedCall {
  /** Sequential per gateway. */
  id: number;
  method: string;
  /** The tool or prompt name, or the resource URI, as the client sent it. */
  target?: string;
  /** The server that answers it, when the name resolves. */
  server?: string;
  /** The catalog view of the client (its token's profile). */
  profile?: string;
  protocolVersion: string;
  /** Epoch ms. */
  startedAt: number;
}

/** How a {@link WatchedCall} ended. */
export interface CallEnd {
  /** `tool_error`: the tool answered with `isError` (or its server failed the call). */
  outcome: "ok" | "error" | "tool_error";
  ms: number;
  /** The error message, or the start of a tool error's text; secrets redacted. */
  error?: string;
}

/** Sees forwarded requests start and end (a dashboard's live calls). */
export interface CallWatcher {
  started(call: WatchedCall): void;
  ended(call: WatchedCall, end: CallEnd): void;
}

/** What a request is about: the name it asks for, and the server and original name behind it. */
export interface CallSubject {
  target?: string;
  server?: string;
  /** The exposed name of a resolved tool (tools/call only). */
  tool?: string;
}

/** Resolves what `params` names, in `profile`'s view; nothing for requests that name nothing. */
export function callSubject(
  hub: Hub,
  method: string,
  params: Record<string, unknown> | undefined,
  profile: string | undefined,
): CallSubject {
  const catalog = hub.catalog;
  switch (method) {
    case "tools/call": {
      const name = params?.name;
      if (typeof name !== "string") return {};
      const tool = catalog.resolveTool(name, profile);
      return tool === undefined ? { target: name } : { target: name, server: tool.server, tool: tool.name };
    }
    case "prompts/get": {
      const name = params?.name;
      if (typeof name !== "string") return {};
      const server = catalog.resolvePrompt(name, profile)?.server;
      return server === undefined ? { target: name } : { target: name, server };
    }
    case "resources/read": {
      const uri = params?.uri;
      if (typeof uri !== "string") return {};
      const server = catalog.resolveResource(uri, profile)?.server;
      return server === undefined ? { target: uri } : { target: uri, server };
    }
    case "completion/complete": {
      const ref = params?.ref as { type?: unknown; name?: unknown; uri?: unknown } | undefined;
      if (ref?.type === "ref/prompt" && typeof ref.name === "string")
        return callSubject(hub, "prompts/get", { name: ref.name }, profile);
      if (typeof ref?.uri === "string") return callSubject(hub, "resources/read", { uri: ref.uri }, profile);
      return {};
    }
    default:
      return {};
  }
}

/** Longest error text a watcher is given. */
const ERROR_CHARS = 300;

/** The start of a tool error's text, or of an error message, cut to a readable length. */
export function errorSummary(text: string): string {
  const line = text.trim();
  return line.length <= ERROR_CHARS ? line : `${line.slice(0, ERROR_CHARS - 1)}…`;
}

/** The text of a result's first text content, if any. */
export function firstText(result: Record<string, unknown>): string | undefined {
  const content = result.content;
  if (!Array.isArray(content)) return undefined;
  for (const item of content) {
    const text = (item as { type?: unknown; text?: unknown } | null)?.text;
    if (typeof text === "string") return text;
  }
  return undefined;
}
