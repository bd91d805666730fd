import { parseArgs } from "node:util";
import { loadConfig } from "../../config/load-config.js";
import { parseDuration } from "../../config/parse-duration.js";
import { tokenProblem } from "../../config/token-rules.js";
import type { TokenConfig } from "../../config/types.js";
import { Gateway } from "../../gateway/gateway.js";
import { DEFAULT_PORT } from "../../gateway/http-front.js";
import { checkNonLoopbackBind } from "../../gateway/http-guard.js";
import { serveGatewayStdio } from "../../gateway/stdio-front.js";
import { watchConfig } from "../../hub/config-reloader.js";
import { Hub } from "../../hub/hub.js";
import { ANSWERING_CAPABILITIES } from "../../protocol/server-requests.js";
import { killChildren, terminateChildren } from "../../upstream/child-processes.js";
import { secretOAuthStore } from "../oauth-login.js";
import { EXIT, UsageError } from "../output.js";
import { LIMIT_FLAGS, readLimitFlags } from "./serve-limits.js";

/** How long upstreams get between SIGTERM and SIGKILL when the stdio client goes away. */
const SHUTDOWN_GRACE_MS = 1000;

/**
 * `mcplex serve`: the whole catalog as one MCP server, over stdio (for clients that
 * spawn servers) or HTTP (Streamable HTTP at /mcp, WebSocket at /ws and HTTP+SSE at /sse, the default).
 */
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
      "operator-token": { type: "string", multiple: true },
      profile: { type: "string" },
      "no-prefix": { type: "boolean" },
      "log-calls": { type: "boolean" },
      "no-dashboard": { type: "boolean" },
      "dashboard-port": { type: "string" },
      "ready-wait": { type: "string" },
      ...LIMIT_FLAGS,
    },
  });
  if (values.stdio === true && (values.http === true || values.ws === true)) {
    throw new UsageError("choose --stdio or --http/--ws, not both");
  }
  const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UsageError(`--port must be 0-65535, not ${values.port}`);
  const dashboardPort = values["dashboard-port"] === undefined ? undefined : Number(values["dashboard-port"]);
  if (dashboardPort !== undefined) {
    if (values.stdio !== true)
      throw new UsageError(
        "--dashboard-port is for --stdio; over HTTP the dashboard is at /dashboard on --port",
      );
    if (!Number.isInteger(dashboardPort) || dashboardPort < 0 || dashboardPort > 65_535)
      throw new UsageError(`--dashboard-port must be 0-65535, not ${values["dashboard-port"]}`);
  }
  const limits = readLimitFlags(values);
  const readyWaitFlag = values["ready-wait"] === undefined ? undefined : parseReadyWait(values["ready-wait"]);
  const config = await loadConfig(values.config === undefined ? {} : { config: values.config });
  const noPrefix = (c: typeof config) => {
    if (values["no-prefix"] === true) for (const server of c.servers) server.prefix = "";
    return c;
  };
  noPrefix(config);
  const profileOf = values.profile === undefined ? {} : { profile: values.profile };
  const checked = (flag: string, list: string[]) =>
    list.map((token, i) => {
      const problem = tokenProblem(token);
      if (problem !== undefined)
        throw new UsageError(`${flag}${list.length > 1 ? ` #${i + 1}` : ""} ${problem}`);
      return token;
    });
  // An operator token may also read /metrics and /readyz; for MCP it is bound like the others.
  const cliTokens: TokenConfig[] = [
    ...checked("--token", values.token ?? []).map((token) => ({ token, ...profileOf })),
    ...checked("--operator-token", values["operator-token"] ?? []).map((token) => ({
      token,
      ...profileOf,
      operator: true,
    })),
  ];
  const tokens: TokenConfig[] = [...config.tokens, ...cliTokens];
  config.secrets.push(...tokens.map((t) => t.token));
  if (values.stdio !== true || dashboardPort !== undefined) {
    const refusal = checkNonLoopbackBind(values.host ?? "127.0.0.1", tokens.length);
    if (refusal !== undefined) throw new UsageError(refusal);
  }

  // The gateway answers server requests per call, for the client that caused them.
  const hub = new Hub({
    config,
    clientCapabilities: ANSWERING_CAPABILITIES,
    oauth: { store: secretOAuthStore() },
  });
  const starting = hub.start();
  // Requests wait for servers still starting, but never past readyWait: one slow server must
  // not hide the others from a client that gives its first list a few seconds.
  const readyWait = readyWaitFlag ?? config.serve?.readyWait;
  const gateway = new Gateway(hub, { ready: starting, ...(readyWait === undefined ? {} : { readyWait }) });
  // Servers that did not start are reported when their start is over, however long it takes,
  // once the gateway serves (a front that cannot listen is the one error to print then).
  const reportWhenStarted = () => void starting.then(() => reportFailures(hub));
  if (values["log-calls"] === true) {
    gateway.observe((sample) => console.error(JSON.stringify({ level: "debug", msg: "call", ...sample })));
  }
  // A saved config file adds, removes or replaces servers while serving.
  // Tokens of a reloaded config go to the HTTP front once there is one; stdio has no tokens.
  let setFrontTokens: ((next: TokenConfig[]) => void) | undefined;
  const applyTokens = (next: TokenConfig[]): string => {
    if (setFrontTokens === undefined) return "tokens ignored (stdio takes none)";
    try {
      setFrontTokens(next);
      config.secrets.push(...next.map((t) => t.token)); // redacted like the first ones
      return "tokens updated";
    } catch (error) {
      return (error as Error).message;
    }
  };
  const watcher =
    config.source === "<default>"
      ? undefined
      : watchConfig(
          hub,
          config,
          (outcome) => {
            if (!outcome.ok) {
              console.error(`mcplex: config not reloaded: ${outcome.error.message}`);
              return;
            }
            const parts: string[] = [];
            if (outcome.added.length + outcome.removed.length + outcome.changed.length > 0) {
              parts.push(
                `added ${outcome.added.join(", ") || "-"}`,
                `removed ${outcome.removed.join(", ") || "-"}`,
              );
              if (outcome.changed.length > 0) parts.push(`replaced ${outcome.changed.join(", ")}`);
            }
            if (outcome.profiles) parts.push("profiles updated");
            if (outcome.tokens) parts.push(applyTokens([...outcome.config.tokens, ...cliTokens]));
            console.error(`mcplex: config reloaded: ${parts.join("; ")}`);
          },
          { transform: noPrefix },
        );
  let stopping: Promise<void> | undefined;
  const stop = (close: () => Promise<void> | void) => {
    stopping ??= (async () => {
      watcher?.close();
      await close();
      gateway.close();
      await hub.close();
    })();
    return stopping;
  };

  if (values.stdio === true) {
    // stdout carries the protocol: everything for people goes to stderr.
    const { done, session } = serveGatewayStdio(
      gateway,
      values.profile === undefined ? {} : { profile: values.profile },
    );
    // The dashboard, on a port of its own: the client has stdio.
    let dashboard: { close(graceMs?: number): Promise<void> } | undefined;
    if (dashboardPort !== undefined) {
      const { startHttpFront } = await import("../../gateway/http-front.js");
      try {
        const front = await startHttpFront(gateway, {
          host: values.host ?? "127.0.0.1",
          port: dashboardPort,
          tokens,
          mcp: false,
          ...(values.profile === undefined || tokens.length > 0 ? {} : { profile: values.profile }),
        });
        setFrontTokens = (next) => front.setTokens(next);
        dashboard = front;
        console.error(`mcplex: dashboard at ${front.dashboardUrl}`);
      } catch (error) {
        await stop(() => {});
        throw error;
      }
    }
    reportWhenStarted();
    // Answers owed go out first (bounded), as on HTTP.
    const drain = () =>
      Promise.race([session.idle(), new Promise<void>((r) => setTimeout(r, 10_000).unref())]);
    // A client stopping its server (Claude Code: SIGINT, SIGTERM 0.1 s later, then SIGKILL)
    // gives little time: every upstream is signalled at once on the first signal, killed on
    // the second.
    onStopSignals(() => {
      void terminateChildren(SHUTDOWN_GRACE_MS);
      void stop(async () => {
        await drain();
        await dashboard?.close(1000);
      }).finally(() => process.exit(EXIT.ok));
    });
    // The end of input ends the session even while servers are still starting.
    await done;
    await Promise.all([terminateChildren(SHUTDOWN_GRACE_MS), stop(() => dashboard?.close(1000))]);
    return EXIT.ok;
  }

  // Loaded only here: --stdio needs none of the HTTP, WebSocket and metrics code.
  const { startHttpFront } = await import("../../gateway/http-front.js");
  let front: Awaited<ReturnType<typeof startHttpFront>>;
  try {
    front = await startHttpFront(gateway, {
      host: values.host ?? "127.0.0.1",
      port,
      tokens,
      ...(values.profile === undefined || tokens.length > 0 ? {} : { profile: values.profile }),
      dashboard: values["no-dashboard"] !== true,
      ...limits,
    });
  } catch (error) {
    await stop(() => {});
    throw error;
  }
  setFrontTokens = (next) => front.setTokens(next);
  reportWhenStarted();
  await gateway.ready;
  const servers = hub.servers();
  const ready = servers.filter((s) => s.state === "ready").length;
  const stillStarting = servers.filter((s) => s.state === "starting").length;
  console.error(
    [
      `mcplex gateway: ${ready} of ${servers.length} servers ready` +
        (stillStarting > 0 ? ` (${stillStarting} still starting, announced when ready)` : "") +
        `, ${hub.tools(values.profile).length} tools`,
      `  Streamable HTTP  ${front.url}`,
      `  WebSocket        ${front.wsUrl}  (subprotocol mcp)`,
      `  HTTP+SSE         ${front.sseUrl}  (2024-11-05, for clients set to type: sse)`,
      `  health           ${front.url.replace(/\/mcp$/, "/readyz")}   metrics ${front.url.replace(/\/mcp$/, "/metrics")}`,
      front.dashboardUrl === undefined ? "" : `  dashboard        ${front.dashboardUrl}`,
      "",
      "Add it to a client:",
      `  Claude Code   claude mcp add --transport http mcplex ${front.url}`,
      `  Cursor        ~/.cursor/mcp.json: {"mcpServers":{"mcplex":{"url":"${front.url}"}}}`,
      `  VS Code       .vscode/mcp.json: {"servers":{"mcplex":{"type":"http","url":"${front.url}"}}}`,
      tokens.length > 0 ? '  (with a token: add the header "Authorization: Bearer <token>")' : "",
      "Ctrl-C stops it.",
    ]
      .filter((line) => line !== "")
      .join("\n"),
  );
  // The first signal lets calls in flight finish; a second one stops everything now.
  await new Promise<void>((resolve) => onStopSignals(() => void stop(() => front.close()).finally(resolve)));
  return EXIT.ok;
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

/** `--ready-wait`: a duration, or 0 to answer at once. */
function parseReadyWait(text: string): number {
  const ms = text === "0" ? 0 : parseDuration(text);
  if (ms === undefined)
    throw new UsageError(
      `--ready-wait must be a duration such as 1s or 500ms, or 0, not ${JSON.stringify(text)}`,
    );
  return ms;
}

/** Servers that did not start (failed, or retrying after a failed start), with what to do. */
function reportFailures(hub: Hub): void {
  for (const server of hub.servers()) {
    if (server.error === undefined || ["ready", "disabled", "stopped"].includes(server.state)) continue;
    console.error(`mcplex: ${server.name} is ${server.state}: ${server.error.split("\n")[0]}`);
    if (server.hint !== undefined) console.error(`  hint: ${server.hint}`);
  }
}
