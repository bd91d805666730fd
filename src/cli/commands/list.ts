import { disabledBlockWarning } from "../../config/check-config.js";
import { COMPOSITE_SERVER } from "../../config/read-composites.js";
import { listDefinition } from "../definitions/list.js";
import { withHub } from "../hub-session.js";
import { EXIT } from "../output.js";
import { parseCommandArgs } from "../parse-command-args.js";
import { terminalJson, terminalText } from "../terminal-text.js";

/** `mcplex list`: servers with state, protocol, error, and their tools. Lazy servers are started too. */
export async function listCommand(args: string[]): Promise<number> {
  const { values } = await parseCommandArgs(listDefinition, args);
  return withHub(
    { ...(values.config === undefined ? {} : { config: values.config }), start: "all" },
    async (hub, config) => {
      const tools = hub.tools(values.profile);
      // Text output only: the JSON shape is fixed.
      const hints = new Map(hub.servers().map((s) => [s.name, s.hint]));
      // The server's own name of each tool an override renamed, shown beside the new one.
      const renamed = new Map(
        tools.filter((t) => t.localName !== undefined).map((t) => [t.name, t.originalName]),
      );
      // A server called with each user's own credentials has no shared connection to be in a state.
      const perUser = new Set(
        hub
          .servers()
          .filter((s) => s.userConnections !== undefined)
          .map((s) => s.name),
      );
      const servers = hub.servers().map((s) => ({
        name: s.name,
        state: s.state,
        transport: s.transport,
        // Only after a fallback, like `breaker`.
        ...(s.fallbackReason === undefined ? {} : { fallbackReason: s.fallbackReason }),
        protocolVersion: s.protocolVersion ?? null,
        error: s.error ?? null,
        // Only while open, so that the usual shape stays as it was.
        ...(s.breaker === undefined ? {} : { breaker: s.breaker }),
        // Only for a pinned server whose tools differ from those approved.
        ...(s.pinChanges === undefined ? {} : { pinChanges: hub.pinChanges(s.name) }),
        tools: tools
          .filter((t) => t.server === s.name)
          .map((t) => ({ name: t.name, originalName: t.originalName, description: t.description ?? null })),
      }));
      // Composite tools (`composites:`) have no server of their own to be listed under.
      const composites = tools
        .filter((t) => t.server === COMPOSITE_SERVER)
        .map((t) => ({ name: t.name, description: t.description ?? null }));
      if (values.json === true) {
        console.log(terminalJson(composites.length === 0 ? { servers } : { servers, composites }));
        return EXIT.ok;
      }
      for (const server of servers) {
        const protocol = server.protocolVersion ?? "-";
        const breaker =
          (server.breaker === undefined ? "" : `  breaker ${server.breaker}`) +
          (server.fallbackReason === undefined ? "" : `  (${server.fallbackReason})`);
        const state = perUser.has(server.name) ? "per-user" : server.state;
        console.log(
          `${server.name}  ${state}  ${server.transport}  ${protocol}  ${server.tools.length} tools${breaker}`,
        );
        if (perUser.has(server.name))
          console.log(
            "    called with each signed-in user's own credentials: it starts on a user's first call",
          );
        if (server.error !== null) {
          for (const line of server.error.split("\n")) console.log(`    ${terminalText(line)}`);
          const hint = hints.get(server.name);
          if (hint !== undefined) console.log(`    hint: ${hint}`);
        }
        if (server.pinChanges !== undefined) {
          const { pinChangeLines } = await import("../pin-report.js");
          for (const line of pinChangeLines(server.name, server.pinChanges, false))
            console.log(`    ${line}`);
        }
        const width = Math.min(48, Math.max(0, ...server.tools.map((t) => t.name.length)));
        for (const tool of server.tools) {
          const description = (tool.description ?? "").split("\n")[0]!.slice(0, 100);
          const own = renamed.get(tool.name);
          const was = own === undefined ? "" : `(renamed from ${server.name}'s ${own}) `;
          console.log(`  ${tool.name.padEnd(width)}  ${was}${terminalText(description)}`);
        }
      }
      if (composites.length > 0) {
        console.log(`composites:  ${composites.length} tools, each a script over the tools above`);
        const width = Math.min(48, Math.max(0, ...composites.map((t) => t.name.length)));
        for (const tool of composites)
          console.log(
            `  ${tool.name.padEnd(width)}  ${terminalText((tool.description ?? "").split("\n")[0]!.slice(0, 100))}`,
          );
      }
      for (const collision of hub.catalog.collisions()) {
        const members = collision.members
          .map((m) => `${m.server}/${m.originalName} → ${m.exposedName}`)
          .join(", ");
        console.log(`note: ${collision.kind} name "${collision.name}" is claimed by several: ${members}`);
      }
      const off = disabledBlockWarning(config);
      if (off !== undefined) console.log(`note: ${off.path} ${off.message}`);
      return EXIT.ok;
    },
  );
}
