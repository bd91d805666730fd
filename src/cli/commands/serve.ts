import { parseArgs } from "node:util";
import { loadConfig } from "../../config/load-config.js";
import { Gateway } from "../../gateway/gateway.js";
import { serveGatewayStdio } from "../../gateway/stdio-front.js";
import { Hub } from "../../hub.js";
import { ANSWERING_CAPABILITIES } from "../../upstream/upstream.js";
import { EXIT, UsageError } from "../output.js";

/** `mcplex serve`: the whole catalog as one MCP server. */
export async function serveCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      config: { type: "string", short: "c" },
      stdio: { type: "boolean" },
      http: { type: "boolean" },
      ws: { type: "boolean" },
      host: { type: "string" },
      port: { type: "string" },
      token: { type: "string", multiple: true },
      profile: { type: "string" },
    },
  });
  const config = await loadConfig(values.config === undefined ? {} : { config: values.config });
  if (values.stdio !== true) {
    throw new UsageError("serve needs --stdio for now (the HTTP and WebSocket fronts are being built)");
  }
  // The gateway answers server requests per call, for the client that caused them.
  const hub = new Hub({ config, clientCapabilities: ANSWERING_CAPABILITIES });
  // stdout carries the protocol: everything for people goes to stderr.
  const starting = hub.start();
  const gateway = new Gateway(hub, { ready: starting });
  const { done } = serveGatewayStdio(
    gateway,
    values.profile === undefined ? {} : { profile: values.profile },
  );
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    gateway.close();
    await hub.close();
  };
  process.once("SIGINT", () => void stop().finally(() => process.exit(EXIT.ok)));
  process.once("SIGTERM", () => void stop().finally(() => process.exit(EXIT.ok)));
  await starting;
  for (const server of hub.servers()) {
    if (server.state === "failed")
      console.error(`mcplex: ${server.name} failed: ${server.error?.split("\n")[0]}`);
  }
  await done;
  await stop();
  return EXIT.ok;
}
