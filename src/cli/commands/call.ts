import type { CallToolResult } from "@modelcontextprotocol/client";
import { ownersOfName } from "../../catalog/tool-naming.js";
import { loadConfig } from "../../config/load-config.js";
import { McplexError, NotFoundError } from "../../errors.js";
import type { Hub } from "../../hub/hub.js";
import { disabledServer } from "../../servers/lookup-errors.js";
import { callDefinition } from "../definitions/call.js";
import { startServers, withHub } from "../hub-session.js";
import { nearestNames } from "../nearest-names.js";
import { EXIT, printError, UsageError } from "../output.js";
import { parseCommandArgs } from "../parse-command-args.js";
import { terminalJson, terminalText } from "../terminal-text.js";

/** `mcplex call TOOL [JSON_ARGS]`: calls one tool and prints its result. */
export async function callCommand(args: string[]): Promise<number> {
  const { values, positionals } = await parseCommandArgs(callDefinition, args, { allowPositionals: true });
  const [name, rawArgs, ...extra] = positionals;
  if (name === undefined) throw new UsageError("call needs a tool name: mcplex call TOOL [JSON_ARGS]");
  if (extra.length > 0)
    throw new UsageError(`unexpected arguments: ${extra.join(" ")} (quote the JSON arguments)`);
  let toolArgs: Record<string, unknown> = {};
  if (rawArgs !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(rawArgs);
    } catch (error) {
      throw new UsageError(
        `JSON_ARGS is not valid JSON (${(error as Error).message}); example: '{"message":"hi"}'`,
      );
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw new UsageError('JSON_ARGS must be a JSON object, e.g. \'{"message":"hi"}\'');
    }
    toolArgs = parsed as Record<string, unknown>;
  }
  const timeout = values.timeout === undefined ? undefined : Number(values.timeout);
  if (timeout !== undefined && !(timeout > 0))
    throw new UsageError("--timeout takes milliseconds, e.g. --timeout 30000");

  const config = await loadConfig(values.config === undefined ? {} : { config: values.config });
  const enabled = config.servers.filter((s) => s.enabled);
  // Only the server the name points at is started; the rest only when it does not have the tool.
  // Disabled servers count as owners: a name that is only theirs needs no server started.
  const owners = ownersOfName(name, config.servers);
  const plan = owners?.filter((owner) => enabled.some((s) => s.name === owner)) ?? enabled.map((s) => s.name);
  return withHub({ config, start: plan }, async (hub, _config, _telemetry, signal) => {
    // Ctrl-C aborts the call: a task the server runs for it is cancelled there.
    const options = {
      signal,
      ...(values.profile === undefined ? {} : { profile: values.profile }),
      ...(timeout === undefined ? {} : { timeout }),
    };
    // Looked up once, and the tool found goes to the call as it is. Once more only when the
    // servers its name points at do not have it: the others start, and the catalog changes.
    let tool = hub.catalog.resolveTool(name, values.profile);
    if (tool === undefined && owners !== undefined && plan.length > 0) {
      const rest = enabled.filter((s) => !owners.includes(s.name)).map((s) => s.name);
      await startServers(hub, config, rest);
      tool = hub.catalog.resolveTool(name, values.profile);
    }
    const context = {
      tool: name,
      ...(tool === undefined ? {} : { server: tool.server, originalName: tool.originalName }),
      redact: (text: string) => hub.redact(text),
    };
    let result: CallToolResult;
    try {
      result = await hub.callTool(tool ?? name, toolArgs, options);
    } catch (error) {
      return printError(explain(error, name, hub, values.profile), context);
    }
    if (values.json === true) console.log(terminalJson(result));
    else console.log(terminalText(formatResult(result)));
    return result.isError === true ? EXIT.toolError : EXIT.ok;
  });
}

type Status = { name: string; state: string; error?: string; hint?: string };

/** The server a `server__tool` name points at, when it exists. */
function owner(name: string, servers: Status[]): Status | undefined {
  const prefix = name.split("__")[0];
  return servers.find((s) => s.name.replace(/[^A-Za-z0-9_-]/g, "_") === prefix);
}

/**
 * An unknown name explained: the server it points at is not ready (unavailable, exit 3),
 * or the names nearest to it (a typo, exit 2).
 */
function explain(error: unknown, name: string, hub: Hub, profile: string | undefined): unknown {
  if (!(error instanceof NotFoundError)) return error;
  const server = owner(name, hub.servers());
  if (server === undefined || server.state === "ready") {
    const near = nearestNames(
      name,
      hub.tools(profile).map((t) => t.name),
    );
    if (near.length === 0) return error;
    return new NotFoundError(error.code, `${error.message}; did you mean ${near.join(", ")}?`, {
      tool: name,
      ...(error.hint === undefined ? {} : { hint: error.hint }),
    });
  }
  if (server.state === "disabled") return disabledServer(server.name);
  return new McplexError(
    "UPSTREAM_UNAVAILABLE",
    `server "${server.name}" is ${server.state}${server.error ? `: ${server.error}` : ""}`,
    { server: server.name, ...(server.hint === undefined ? {} : { hint: server.hint }) },
  );
}

/** Text content as text; other content summarised on one line each. */
export function formatResult(result: CallToolResult): string {
  const lines: string[] = [];
  for (const block of result.content ?? []) {
    switch (block.type) {
      case "text":
        lines.push(block.text);
        break;
      case "image":
      case "audio":
        lines.push(`[${block.type} ${block.mimeType}, ${Math.floor((block.data.length * 3) / 4)} bytes]`);
        break;
      case "resource_link":
        lines.push(`[resource link ${block.uri}${block.name ? ` (${block.name})` : ""}]`);
        break;
      case "resource": {
        const resource = block.resource as { uri: string; text?: string; mimeType?: string };
        lines.push(
          resource.text ?? `[resource ${resource.uri}${resource.mimeType ? ` ${resource.mimeType}` : ""}]`,
        );
        break;
      }
      default:
        lines.push(JSON.stringify(block));
    }
  }
  if (lines.length === 0 && result.structuredContent !== undefined) {
    lines.push(JSON.stringify(result.structuredContent, null, 2));
  }
  return lines.join("\n");
}
