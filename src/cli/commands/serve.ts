import type { RunningGateway } from "../../assembly/serve.js";
import { EXPOSED_PROFILE } from "../../config/expose-tools.js";
import type { McplexConfig, TokenConfig } from "../../config/types.js";
import { killChildren, terminateChildren } from "../../upstream/child-processes.js";
import { dropSpawnedAhead, spawnAhead } from "../../upstream/spawn-server.js";
import { EXIT, printError, UsageError } from "../output.js";
import { unmatchedExposeTools } from "./expose-tool-flag.js";
import {
  parseServeArgs,
  readServeConfig,
  readServeFlags,
  readTokenFlags,
  type ServeFlags,
  type ServeFlagValues,
} from "./serve-flags.js";
import { printEvent, printSimulated } from "./serve-report.js";

/** How long upstreams get between SIGTERM and SIGKILL when the stdio client goes away. */
const SHUTDOWN_GRACE_MS = 1000;

/**
 * `mcplex serve`: the whole catalog as one MCP server, over stdio (for clients that
 * spawn servers) or HTTP (Streamable HTTP at /mcp, WebSocket at /ws and HTTP+SSE at /sse, the default).
 */
export async function serveCommand(args: string[]): Promise<number> {
  const values = await parseServeArgs(args);
  const flags = await readServeFlags(values);
  const config = await readServeConfig(values);
  const cliTokens = readTokenFlags(values);
  const tokens: TokenConfig[] = [...config.tokens, ...cliTokens];
  if (!flags.stdio || flags.dashboardPort !== undefined) {
    // The HTTP guard's code only where HTTP is served: a stdio start does without it.
    const { checkNonLoopbackBind } = await import("../../fronts/http-guard.js");
    const refusal = checkNonLoopbackBind(flags.host, tokens.length);
    if (refusal !== undefined) throw new UsageError(refusal);
  }
  const running = await startGateway(config, flags, values, cliTokens);
  if (running.stdio !== undefined) return serveOverStdio(running, running.stdio);
  await running.ready;
  console.error(
    gatewayBanner(
      running,
      values.profile ?? (flags.exposeTools.length > 0 ? EXPOSED_PROFILE : undefined),
      tokens.length > 0,
    ),
  );
  // The first signal lets calls in flight finish; a second one stops everything now.
  await new Promise<void>((resolve) => onStopSignals(() => void running.close().finally(resolve)));
  return EXIT.ok;
}

/**
 * Starts the servers and the gateway in front of them, and reports what is simulated and which
 * `--expose-tool` matches nothing; `--log-calls` from then on.
 */
async function startGateway(
  config: McplexConfig,
  flags: ServeFlags,
  values: ServeFlagValues,
  cliTokens: TokenConfig[],
): Promise<RunningGateway> {
  // The servers' processes start now, and the code of the hub, the gateway and the front loads
  // while they start: a client that spawns `mcplex serve --stdio` per session waits for both
  // (bench/startup-bench.ts). Simulated ones are not started at all.
  if (flags.standIns.simulate === undefined) spawnAhead(config.servers);
  const [{ serve }, { secretOAuthStore }, { disabledBlockWarning }] = await Promise.all([
    import("../../assembly/serve.js"),
    import("../oauth-login.js"),
    // The config check's code (and picomatch's) after the spawn: it only explains an empty catalog.
    import("../../config/check-config.js"),
  ]);
  const off = disabledBlockWarning(config);
  if (off !== undefined) console.error(`mcplex: note: ${off.path} ${off.message}`);
  const { exposeTools } = flags;
  let running: RunningGateway;
  try {
    running = await serve({
      config,
      transport: flags.stdio ? "stdio" : "http",
      ...(exposeTools.length === 0 ? {} : { exposeTools }),
      tokens: cliTokens,
      noPrefix: values["no-prefix"] === true,
      ...(values.profile === undefined ? {} : { profile: values.profile }),
      ...(flags.readyWait === undefined ? {} : { readyWait: flags.readyWait }),
      ...(flags.mode === undefined ? {} : { mode: flags.mode }),
      ...httpOptions(flags, values),
      oauth: { store: secretOAuthStore() },
      onEvent: printEvent,
      ...flags.standIns,
    });
  } catch (error) {
    // A start that failed before the hub took them would leave them holding this process open.
    dropSpawnedAhead();
    throw error;
  }
  // Every server the start started has taken its process by the time the start is over.
  void running.started.then(dropSpawnedAhead);
  printSimulated(running.simulated);
  if (exposeTools.length > 0) {
    // Checked once every server has started, on stdio without holding the client up.
    const checked = running.started.then(async () => {
      const problem = await unmatchedExposeTools(running.hub, exposeTools);
      if (problem === undefined) return;
      printError(problem);
      await Promise.all([terminateChildren(SHUTDOWN_GRACE_MS), running.close(0)]);
      process.exit(EXIT.usage);
    });
    if (running.stdio === undefined) await checked;
  }
  if (values["log-calls"] === true) {
    running.observe((sample) => console.error(JSON.stringify({ level: "debug", msg: "call", ...sample })));
  }
  return running;
}

/** The HTTP front's options: over HTTP, or beside stdio for `--dashboard-port`; none otherwise. */
function httpOptions(flags: ServeFlags, values: ServeFlagValues) {
  const { host, allowedOrigins } = flags;
  const origins = allowedOrigins.length === 0 ? {} : { allowedOrigins };
  if (flags.stdio)
    return flags.dashboardPort === undefined ? {} : { http: { host, port: flags.dashboardPort, ...origins } };
  return {
    http: {
      host,
      ...(flags.port === undefined ? {} : { port: flags.port }),
      dashboard: values["no-dashboard"] !== true,
      ...flags.limits,
      ...(flags.rateLimit === undefined ? {} : { rateLimit: flags.rateLimit }),
      ...origins,
    },
  };
}

/** Serves one stdio client until its input ends or a signal stops it. */
async function serveOverStdio(
  running: RunningGateway,
  stdio: NonNullable<RunningGateway["stdio"]>,
): Promise<number> {
  // stdout carries the protocol: everything for people goes to stderr.
  if (running.http?.dashboardUrl !== undefined)
    console.error(`mcplex: dashboard at ${running.http.dashboardUrl}`);
  // A client stopping its server (Claude Code: SIGINT, SIGTERM 0.1 s later, then SIGKILL)
  // gives little time: every upstream is signalled at once on the first signal, killed on
  // the second.
  onStopSignals(() => {
    void terminateChildren(SHUTDOWN_GRACE_MS);
    void running.close().finally(() => process.exit(EXIT.ok));
  });
  // The end of input ends the session even while servers are still starting.
  await stdio.done;
  await Promise.all([terminateChildren(SHUTDOWN_GRACE_MS), running.close(0)]);
  return EXIT.ok;
}

/** What the gateway says once it is up: its endpoints, and how to add it to a client. */
function gatewayBanner(running: RunningGateway, profile: string | undefined, withTokens: boolean): string {
  const front = running.http!;
  const { hub } = running;
  const servers = hub.servers();
  const ready = servers.filter((s) => s.state === "ready").length;
  const stillStarting = servers.filter((s) => s.state === "starting").length;
  return [
    `mcplex gateway${running.simulated.length > 0 ? " (SIMULATED)" : ""}: ${ready} of ${servers.length} servers ready` +
      (stillStarting > 0 ? ` (${stillStarting} still starting, announced when ready)` : "") +
      `, ${hub.tools(profile).length} tools`,
    `  Streamable HTTP  ${front.url}`,
    `  WebSocket        ${front.wsUrl}  (subprotocol mcp)`,
    `  HTTP+SSE         ${front.sseUrl}  (2024-11-05, for clients set to type: sse)`,
    `  health           ${front.url.replace(/\/mcp$/, "/readyz")}   metrics ${front.url.replace(/\/mcp$/, "/metrics")}`,
    running.replica === undefined ? "" : `  cluster          replica ${running.replica}`,
    front.dashboardUrl === undefined ? "" : `  dashboard        ${front.dashboardUrl}`,
    "",
    "Add it to a client:",
    `  Claude Code   claude mcp add --transport http mcplex ${front.url}`,
    `  Cursor        ~/.cursor/mcp.json: {"mcpServers":{"mcplex":{"url":"${front.url}"}}}`,
    `  VS Code       .vscode/mcp.json: {"servers":{"mcplex":{"type":"http","url":"${front.url}"}}}`,
    withTokens ? '  (with a token: add the header "Authorization: Bearer <token>")' : "",
    "Ctrl-C stops it.",
  ]
    .filter((line) => line !== "")
    .join("\n");
}

/** Runs `first` on the first SIGINT or SIGTERM; a second one kills every server and exits now. */
function onStopSignals(first: () => void): void {
  let signalled = false;
  const onSignal = () => {
    if (signalled) {
      killChildren();
      process.exit(EXIT.ok);
    }
    signalled = true;
    first();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
}
