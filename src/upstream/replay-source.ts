import type { ReplayServerConfig } from "../config/types.js";
import { McplexError } from "../errors.js";
import { ReplayBook } from "../recording/replay-book.js";
import { ToolSimulator } from "../recording/tool-simulator.js";
import { ReplayTransport } from "./replay-transport.js";

/**
 * The transport of a `transport: replay` server: its recording read afresh (so each connection
 * replays from the start), or a simulator built from its tool list.
 */
export function replayTransport(config: ReplayServerConfig): ReplayTransport {
  if (config.simulator === undefined && config.recording.length === 0)
    throw new McplexError(
      "UPSTREAM_START_FAILED",
      `${config.name}: cannot be simulated: it has no recording and no cached tool list`,
      {
        server: config.name,
        transport: "replay",
        hint: `run it once for real (\`mcplex serve\` caches its tools), or record it with \`mcplex serve --record DIR\``,
      },
    );
  const source =
    config.simulator === undefined
      ? ReplayBook.read(config.recording, config.mode)
      : new ToolSimulator({
          server: config.name,
          tools: config.simulator.tools,
          seed: config.simulator.seed,
          ...(config.simulator.serverInfo === undefined ? {} : { serverInfo: config.simulator.serverInfo }),
        });
  return new ReplayTransport({ source, server: config.name, speed: config.speed });
}
