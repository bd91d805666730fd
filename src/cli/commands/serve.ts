import { resolve } from "node:path";
import type { AuditSinkEvent } from "../../audit/audit-sink.js";
import { isCatalogMode } from "../../catalog-modes/catalog-mode.js";
import { EXPOSED_PROFILE } from "../../config/expose-tools.js";
import { loadConfig } from "../../config/load-config.js";
import { readOrigin } from "../../config/origin-rules.js";
import { parseDuration } from "../../config/parse-duration.js";
import { AUDIT_TO_STDERR, DEFAULT_AUDIT_KEEP, DEFAULT_AUDIT_MAX_SIZE } from "../../config/read-audit.js";
import { clusterUrlProblem } from "../../config/read-cluster.js";
import { tokenProblem } from "../../config/token-rules.js";
import type { CatalogMode, McplexConfig, TokenConfig } from "../../config/types.js";
import { defaultCacheDir } from "../../recording/default-cache-dir.js";
import type { SimulatedServer } from "../../recording/simulated-servers.js";
import type { RunningGateway, ServeEvent, ServeOptions } from "../../serve/serve.js";
import { killChildren, terminateChildren } from "../../upstream/child-processes.js";
import { dropSpawnedAhead, spawnAhead } from "../../upstream/spawn-server.js";
import { serveDefinition } from "../definitions/serve.js";
import { EXIT, isDebug, printError, UsageError } from "../output.js";
import { parseCommandArgs } from "../parse-command-args.js";
import { readExposeTools, unmatchedExposeTools } from "./expose-tool-flag.js";
import { readLimitFlags } from "./serve-limits.js";

/** How long upstreams get between SIGTERM and SIGKILL when the stdio client goes away. */
const SHUTDOWN_GRACE_MS = 1000;

/**
 * `mcplex serve`: the whole catalog as one MCP server, over stdio (for clients that
 * spawn servers) or HTTP (Streamable HTTP at /mcp, WebSocket at /ws and HTTP+SSE at /sse, the default).
 */
export async function serveCommand(args: string[]): Promise<number> {
  const { values } = await parseCommandArgs(serveDefinition, args);
  if (values.stdio === true && (values.http === true || values.ws === true)) {
    throw new UsageError("choose --stdio or --http/--ws, not both");
  }
  const transport = readTransport(values);
  const stdio = transport === "stdio";
  const exposeTools = await readExposeTools(values);
  // Unset: the HTTP front's default (DEFAULT_PORT).
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port <= 65_535))
    throw new UsageError(`--port must be 0-65535, not ${values.port}`);
  const dashboardPort = values["dashboard-port"] === undefined ? undefined : Number(values["dashboard-port"]);
  if (dashboardPort !== undefined) {
    if (!stdio)
      throw new UsageError(
        "--dashboard-port is for --stdio; over HTTP the dashboard is at /dashboard on --port",
      );
    if (!Number.isInteger(dashboardPort) || dashboardPort < 0 || dashboardPort > 65_535)
      throw new UsageError(`--dashboard-port must be 0-65535, not ${values["dashboard-port"]}`);
  }
  const limits = readLimitFlags(values);
  const allowedOrigins = (values["allow-origin"] ?? []).map((entry) => {
    const read = readOrigin(entry);
    if ("problem" in read) throw new UsageError(`--allow-origin ${JSON.stringify(entry)} ${read.problem}`);
    return read.origin;
  });
  const rateLimit = values["rate-limit"] === undefined ? undefined : parseRateLimit(values["rate-limit"]);
  const standIns = readStandInFlags(values);
  const readyWaitFlag = values["ready-wait"] === undefined ? undefined : parseReadyWait(values["ready-wait"]);
  const mode = values.tools === undefined ? undefined : toolsMode(values.tools);
  const loaded = await loadConfig(values.config === undefined ? {} : { config: values.config });
  const clustered = values.cluster === undefined ? loaded : withClusterUrl(loaded, values.cluster);
  const config = values.audit === undefined ? clustered : withAuditTo(clustered, values.audit);
  if (config.cluster !== undefined && values.stdio === true)
    throw new UsageError(
      "cluster mode (cluster: or --cluster) is for --http: a stdio client has one process",
    );
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
  if (!stdio || dashboardPort !== undefined) {
    // The HTTP guard's code only where HTTP is served: a stdio start does without it.
    const { checkNonLoopbackBind } = await import("../../fronts/http-guard.js");
    const refusal = checkNonLoopbackBind(values.host ?? "127.0.0.1", tokens.length);
    if (refusal !== undefined) throw new UsageError(refusal);
  }
  const host = values.host ?? "127.0.0.1";
  // The servers' processes start now, and the code of the hub, the gateway and the front loads
  // while they start: a client that spawns `mcplex serve --stdio` per session waits for both
  // (bench/startup-bench.ts). Simulated ones are not started at all.
  if (standIns.simulate === undefined) spawnAhead(config.servers);
  const [{ serve }, { secretOAuthStore }, { disabledBlockWarning }] = await Promise.all([
    import("../../serve/serve.js"),
    import("../oauth-login.js"),
    // The config check's code (and picomatch's) after the spawn: it only explains an empty catalog.
    import("../../config/check-config.js"),
  ]);
  const off = disabledBlockWarning(config);
  if (off !== undefined) console.error(`mcplex: note: ${off.path} ${off.message}`);
  let running: RunningGateway;
  try {
    running = await serve({
      config,
      transport: stdio ? "stdio" : "http",
      ...(exposeTools.length === 0 ? {} : { exposeTools }),
      tokens: cliTokens,
      noPrefix: values["no-prefix"] === true,
      ...profileOf,
      ...(readyWaitFlag === undefined ? {} : { readyWait: readyWaitFlag }),
      ...(mode === undefined ? {} : { mode }),
      ...(stdio
        ? dashboardPort === undefined
          ? {}
          : {
              http: { host, port: dashboardPort, ...(allowedOrigins.length === 0 ? {} : { allowedOrigins }) },
            }
        : {
            http: {
              host,
              ...(port === undefined ? {} : { port }),
              dashboard: values["no-dashboard"] !== true,
              ...limits,
              ...(rateLimit === undefined ? {} : { rateLimit }),
              ...(allowedOrigins.length === 0 ? {} : { allowedOrigins }),
            },
          }),
      oauth: { store: secretOAuthStore() },
      onEvent: printEvent,
      ...standIns,
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

  if (running.stdio !== undefined) {
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
    await running.stdio.done;
    await Promise.all([terminateChildren(SHUTDOWN_GRACE_MS), running.close(0)]);
    return EXIT.ok;
  }

  const front = running.http!;
  const { hub } = running;
  await running.ready;
  const servers = hub.servers();
  const ready = servers.filter((s) => s.state === "ready").length;
  const stillStarting = servers.filter((s) => s.state === "starting").length;
  console.error(
    [
      `mcplex gateway${running.simulated.length > 0 ? " (SIMULATED)" : ""}: ${ready} of ${servers.length} servers ready` +
        (stillStarting > 0 ? ` (${stillStarting} still starting, announced when ready)` : "") +
        `, ${hub.tools(values.profile ?? (exposeTools.length > 0 ? EXPOSED_PROFILE : undefined)).length} tools`,
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
      tokens.length > 0 ? '  (with a token: add the header "Authorization: Bearer <token>")' : "",
      "Ctrl-C stops it.",
    ]
      .filter((line) => line !== "")
      .join("\n"),
  );
  // The first signal lets calls in flight finish; a second one stops everything now.
  await new Promise<void>((resolve) => onStopSignals(() => void running.close().finally(resolve)));
  return EXIT.ok;
}

/** `--record DIR`, `--simulate`, `--seed N`, `--speed N` as serve options; the tool cache always. */
function readStandInFlags(values: {
  record?: string | undefined;
  simulate?: boolean | undefined;
  seed?: string | undefined;
  speed?: string | undefined;
}): Pick<ServeOptions, "record" | "simulate" | "toolCache"> {
  if (values.record === "") throw new UsageError("--record needs a directory");
  const seed = values.seed === undefined ? 1 : Number(values.seed);
  if (!Number.isSafeInteger(seed)) throw new UsageError(`--seed must be a whole number, not ${values.seed}`);
  const speed = values.speed === undefined ? undefined : Number(values.speed);
  if (speed !== undefined && !(Number.isFinite(speed) && speed >= 0))
    throw new UsageError(`--speed must be a number of 0 or more (0: at once), not ${values.speed}`);
  if (values.simulate !== true && (values.seed !== undefined || values.speed !== undefined))
    throw new UsageError("--seed and --speed are for --simulate");
  const cacheDir = defaultCacheDir();
  const out: Pick<ServeOptions, "record" | "simulate" | "toolCache"> = { toolCache: cacheDir };
  if (values.record !== undefined) out.record = resolve(values.record);
  if (values.simulate === true)
    out.simulate = { all: true, seed, cacheDir, ...(speed === undefined ? {} : { speed }) };
  return out;
}

/** Says at start which servers are stand-ins, and which have nothing to stand in with. */
function printSimulated(simulated: readonly SimulatedServer[]): void {
  for (const { server, from, source } of simulated) {
    if (from === "nothing")
      console.error(
        `mcplex: ${server} cannot be simulated: no recording and no cached tool list (run it once with \`mcplex serve\`, or record it with --record DIR)`,
      );
    else
      console.error(
        `mcplex: ${server} is SIMULATED from its ${from === "recording" ? "recording" : "cached tool list"} (${source})`,
      );
  }
}

/** What serving reports, as lines for people on stderr. */
function printEvent(event: ServeEvent): void {
  if (event.type === "cluster") {
    const e = event.event;
    if (e.type === "redis-down")
      console.error(
        `mcplex: warning: Redis is out of reach (${e.error}); forwarding uses the last known replicas and rate limits hold per replica until it returns`,
      );
    else if (e.type === "redis-up") console.error("mcplex: Redis reached again; cluster state shared again");
    else console.error(`mcplex: warning: replicas ${e.replicas.join(", ")} serve a different config`);
    return;
  }
  if (isAuditEvent(event)) {
    printAuditEvent(event);
    return;
  }
  if (event.type === "auth") {
    console.error(`mcplex: warning: ${event.message}`);
    return;
  }
  if (event.type === "record-failed") {
    console.error(`mcplex: recording of ${event.server} stopped: ${event.error}`);
    return;
  }
  if (event.type === "pin-lock-unreadable") {
    console.error(`mcplex: warning: ${event.error}; the approvals read before stay in force`);
    return;
  }
  if (event.type === "pin-changes") {
    // Loaded only when a pinned server changed: serve's start path stays as it was.
    void import("../pin-report.js").then(({ pinChangeLines }) => {
      for (const line of pinChangeLines(event.server, event.changes)) console.error(`mcplex: ${line}`);
    });
    return;
  }
  if (event.type === "list-not-implemented") {
    if (isDebug())
      console.error(
        `mcplex: debug: ${event.server} answers ${event.method} with "method not found" though it declares the capability; read as an empty list`,
      );
    return;
  }
  if (event.type === "start-failed") {
    console.error(`mcplex: ${event.server} is ${event.state}: ${event.error}`);
    if (event.hint !== undefined) console.error(`  hint: ${event.hint}`);
    return;
  }
  const { outcome } = event;
  if (!outcome.ok) {
    console.error(`mcplex: config not reloaded: ${outcome.error.message}`);
    return;
  }
  const parts: string[] = [];
  if (outcome.added.length + outcome.removed.length + outcome.changed.length > 0) {
    parts.push(`added ${outcome.added.join(", ") || "-"}`, `removed ${outcome.removed.join(", ") || "-"}`);
    if (outcome.changed.length > 0) parts.push(`replaced ${outcome.changed.join(", ")}`);
  }
  if (outcome.profiles) parts.push("profiles updated");
  if (event.tokens !== undefined) parts.push(event.tokens);
  if (outcome.serve) parts.push("serve: mode and pin applied, other settings at the next start");
  console.error(`mcplex: config reloaded: ${parts.join("; ")}`);
}

function isAuditEvent(event: ServeEvent): event is AuditSinkEvent {
  return event.type.startsWith("audit-");
}

/** Says what goes wrong (and right again) with the audit trail. */
function printAuditEvent(event: AuditSinkEvent): void {
  switch (event.type) {
    case "audit-write-failed":
      console.error(
        `mcplex: warning: cannot write the audit trail to ${event.to} (${event.error}); its lines are kept and written again every second, and calls are refused while too many wait`,
      );
      return;
    case "audit-write-resumed":
      console.error(`mcplex: the audit trail is written to ${event.to} again`);
      return;
    case "audit-calls-refused":
      console.error(
        `mcplex: warning: ${event.count} call${event.count === 1 ? "" : "s"} refused (AUDIT_BEHIND): the audit trail to ${event.to} cannot keep up`,
      );
      return;
    case "audit-recent-lines-dropped":
      console.error(
        `mcplex: warning: rotating the audit trail dropped ${event.file} with ${event.lines} line${event.lines === 1 ? "" : "s"}, the newest ${Math.round(event.newestAgeMs / 1000)} s old (younger than audit.keepFor): lines come faster than audit.keep files of audit.maxSize hold; look for a flood of calls, or raise audit.keep or audit.maxSize`,
      );
      return;
    case "audit-lines-lost":
      console.error(
        `mcplex: error: ${event.count} audit line${event.count === 1 ? "" : "s"} could not be written to ${event.to} before stopping: ${event.error}`,
      );
      return;
  }
}

/** `--transport stdio | http | websocket` (http and websocket are one front: /mcp and /ws), or the older flags. */
function readTransport(values: { transport?: string; stdio?: boolean; http?: boolean; ws?: boolean }) {
  const flag = values.transport;
  if (flag === undefined) return values.stdio === true ? "stdio" : "http";
  if (flag !== "stdio" && flag !== "http" && flag !== "websocket")
    throw new UsageError(`--transport must be stdio, http or websocket, not ${JSON.stringify(flag)}`);
  const older =
    values.stdio === true ? "stdio" : values.http === true || values.ws === true ? "http" : undefined;
  if (older !== undefined && older !== (flag === "stdio" ? "stdio" : "http"))
    throw new UsageError(
      `--transport ${flag} contradicts ${older === "stdio" ? "--stdio" : "--http/--ws"}; give one`,
    );
  return flag === "stdio" ? "stdio" : "http";
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

/** `--cluster redis://...`: the config's `cluster:` block with this Redis URL. */
function withClusterUrl(config: McplexConfig, url: string): McplexConfig {
  const problem = clusterUrlProblem(url);
  if (problem !== undefined) throw new UsageError(`--cluster ${problem}`);
  return { ...config, cluster: { ...config.cluster, url } };
}

/**
 * `--audit FILE|-`: the config's `audit:` block (or the defaults) writing to this file (relative
 * to the working directory) or, for `-`, to stderr.
 */
function withAuditTo(config: McplexConfig, flag: string): McplexConfig {
  if (flag === "")
    throw new UsageError('--audit needs a file to write the audit trail to, or "-" for stderr');
  const to = flag === "-" ? AUDIT_TO_STDERR : resolve(flag);
  const audit = config.audit ?? {
    to,
    maxSize: DEFAULT_AUDIT_MAX_SIZE,
    keep: DEFAULT_AUDIT_KEEP,
    content: false,
  };
  return { ...config, audit: { ...audit, to } };
}

/** `--rate-limit RATE[:BURST]`: requests per second per token (or client address), and the burst. */
function parseRateLimit(text: string): { perSecond: number; burst: number } {
  const match = /^(\d+(?:\.\d+)?)(?::(\d+))?$/.exec(text);
  const perSecond = Number(match?.[1]);
  const burst = match?.[2] === undefined ? Math.max(1, Math.ceil(perSecond)) : Number(match[2]);
  if (match === null || !(perSecond > 0) || !(burst >= 1))
    throw new UsageError(
      `--rate-limit must be requests per second with an optional burst, such as 20 or 20:40, not ${JSON.stringify(text)}`,
    );
  return { perSecond, burst };
}

/** `--tools`: how clients see the tools. */
function toolsMode(text: string): CatalogMode {
  if (isCatalogMode(text)) return text;
  throw new UsageError(`--tools must be all, search or code, not ${JSON.stringify(text)}`);
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
