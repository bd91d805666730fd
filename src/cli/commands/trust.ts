import { McplexError } from "../../errors.js";
import { trustDefinition } from "../definitions/trust.js";
import { withHub } from "../hub-session.js";
import { EXIT, UsageError } from "../output.js";
import { parseCommandArgs } from "../parse-command-args.js";
import { pinChangeLines } from "../pin-report.js";

/**
 * `mcplex trust SERVER [TOOL]`: starts the server, shows what changed since its tools were
 * approved, and approves it (all of the server's changes, or one tool's) in the lock file. A
 * running `serve` picks the approval up when its dashboard action or a restart re-reads it.
 */
export async function trustCommand(args: string[]): Promise<number> {
  const { values, positionals } = await parseCommandArgs(trustDefinition, args, { allowPositionals: true });
  const [server, tool, ...rest] = positionals;
  if (server === undefined || rest.length > 0)
    throw new UsageError("usage: mcplex trust SERVER [TOOL] [--config F] [--json]");
  return withHub(
    { ...(values.config === undefined ? {} : { config: values.config }), start: [server] },
    async (hub, config) => {
      const known = [...config.servers, ...(config.available ?? [])].map((s) => s.name);
      if (!known.includes(server))
        throw new McplexError("INVALID_ARGUMENT", `no server "${server}" in ${config.source}`, {
          server,
          hint: `servers: ${known.join(", ") || "none"}`,
        });
      // One under `available:` is started on request: this is one.
      if ((config.available ?? []).some((s) => s.name === server))
        await hub.connectServer(server).catch(() => {});
      const status = hub.servers().find((s) => s.name === server);
      if (status?.state !== "ready")
        throw new McplexError(
          "UPSTREAM_UNAVAILABLE",
          `server "${server}" did not start: ${status?.error ?? status?.state}`,
          {
            server,
            hint: "trust approves what a server lists now, so it must start; see `mcplex doctor`",
          },
        );
      const changes = hub.pinChanges(server).filter((c) => tool === undefined || c.tool === tool);
      const trusted = await hub.trustTools(server, tool);
      if (values.json === true) {
        console.log(JSON.stringify({ server, trusted, changes }));
        return EXIT.ok;
      }
      for (const line of pinChangeLines(server, changes)) console.log(line);
      console.log(`trusted ${server}: ${trusted.join(", ")}`);
      return EXIT.ok;
    },
  );
}
