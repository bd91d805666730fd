import { createServer } from "node:net";
import { type LlmFlags, resolveLlmConfig } from "../agent/llm-config.js";
import { checkConfig, type ServerSummary } from "../config/check-config.js";
import { isPerUser } from "../config/read-credentials.js";
import { redact } from "../config/redact.js";
import type { McplexConfig } from "../config/types.js";
import { ConfigError } from "../errors.js";
import { DEFAULT_PORT } from "../fronts/http-front.js";
import { hostPort, listenProblem } from "../fronts/listen-error.js";
import type { Hub } from "../hub/hub.js";
import type { ServerStatus } from "../hub/hub-types.js";
import { probeSandbox } from "../sandbox/find-bwrap.js";
import { processLimitKind } from "../sandbox/sandbox-launch.js";
import { withHub } from "./hub-session.js";

/** How one check came out: `warn` works but deserves a look; `fail` is something that does not work. */
export type CheckStatus = "ok" | "warn" | "fail" | "skip";

/** One line of `mcplex doctor`. */
export interface Check {
  area: "node" | "config" | "sandbox" | "server" | "catalog" | "serve" | "sign-in" | "credentials" | "llm";
  status: CheckStatus;
  message: string;
  /** What to do about it. */
  hint?: string;
  /** The server a `server` check is about. */
  server?: string;
}

export interface DoctorOptions {
  config?: string;
  /** Where `mcplex serve` would listen. Default 127.0.0.1 and {@link DEFAULT_PORT}. */
  host?: string;
  port?: number;
  /** LLM flags, as `mcplex chat` takes them. */
  llm?: LlmFlags;
  /** Variables for the config's `${VAR}` and the `MCPLEX_LLM_*` settings. Default `process.env`. */
  env?: Record<string, string | undefined>;
  /** Milliseconds the LLM endpoint gets to answer `GET /models`. Default 5000. */
  llmTimeout?: number;
}

/** The first Node major mcplex supports. */
const NODE_MAJOR = 20;
/** A server whose start took more than this share of its `startTimeout` is flagged. */
const SLOW_START_SHARE = 0.5;
/** The tool limit of OpenAI's chat API, which `mcplex chat` works around by searching. */
const PROVIDER_TOOL_LIMIT = 128;

/**
 * Everything `mcplex doctor` checks, in order: Node, the config, every enabled server
 * started for real (lazy ones too), the merged catalog, the port `mcplex serve` would
 * take, and the LLM endpoint `mcplex chat` would use. Never throws for what it checks:
 * each problem is a `fail` check with a hint.
 */
export async function runDoctor(options: DoctorOptions = {}): Promise<Check[]> {
  const env = options.env ?? process.env;
  const checks: Check[] = [nodeCheck()];
  const configured = await checkConfig({
    ...(options.config === undefined ? {} : { config: options.config }),
    env,
  });
  let config: McplexConfig | undefined;
  if (!configured.ok) {
    const { error, issues } = configured;
    if (issues.length > 1) {
      // The error's message lists every problem: here each is a check of its own, counted once.
      const source = (error.message.split("\n")[0] ?? "").replace(/ has \d+ problems:$/, "");
      issues.forEach((issue, i) => {
        const where = issue.path === "" ? "" : `${issue.path}: `;
        const message = `${i === 0 ? `${source}: ` : ""}${where}${issue.message}`;
        checks.push({ area: "config", status: "fail", message });
      });
    } else {
      checks.push({
        area: "config",
        status: "fail",
        message: error.message,
        hint: error.hint ?? "Run `mcplex config check` for every problem in the file.",
      });
    }
  } else {
    const { summary } = configured;
    const enabled = summary.servers.filter((s) => s.enabled).length;
    checks.push({
      area: "config",
      status: "ok",
      message:
        summary.format === "default"
          ? `no config file here: the embedded default, ${summary.servers.map((s) => s.target).join(", ")}`
          : `${summary.source} (${summary.format}): ${count(summary.servers.length, "server")}, ${enabled} enabled`,
    });
    for (const warning of summary.warnings) {
      checks.push({ area: "config", status: "warn", message: `${warning.path}: ${warning.message}` });
    }
    config = configured.config;
    checks.push(sandboxCheck(config));
    let times = new Map<string, number>();
    await withHub(
      {
        config,
        start: "all",
        onHub: (hub) => {
          times = readyTimes(hub);
        },
      },
      async (hub, loaded) => {
        checks.push(...serverChecks(hub, loaded, summary.servers, times), ...catalogChecks(hub));
      },
    );
  }
  checks.push(await portCheck(options.host ?? "127.0.0.1", options.port ?? DEFAULT_PORT));
  if (config?.auth !== undefined) checks.push(...(await signInChecks(config.auth)));
  if (config !== undefined) checks.push(...(await exchangeChecks(config)));
  checks.push(await llmCheck(config, options, env));
  return checks;
}

/** Each issuer of `auth:` asked what the gateway will ask it: metadata, keys, introspection. */
async function signInChecks(auth: NonNullable<McplexConfig["auth"]>): Promise<Check[]> {
  const { checkIssuer } = await import("../auth/issuer-check.js");
  return Promise.all(
    auth.issuers.map(async (issuer) => {
      const report = await checkIssuer(issuer);
      return {
        area: "sign-in" as const,
        status: report.ok ? ("ok" as const) : ("fail" as const),
        message: report.message,
        ...(report.hint === undefined ? {} : { hint: report.hint }),
      };
    }),
  );
}

/** Each `credentials: { exchange }` or `{ idJag }` server's identity provider: among auth.issuers, offering the grant. */
async function exchangeChecks(config: McplexConfig): Promise<Check[]> {
  const servers = config.servers.filter((server) => server.enabled && typeof server.credentials === "object");
  if (servers.length === 0) return [];
  const { checkTokenExchange } = await import("../credentials/exchange-check.js");
  const issuers = (config.auth?.issuers ?? []).map((entry) => entry.issuer);
  const reports = await Promise.all(servers.map((server) => checkTokenExchange(server, issuers)));
  return reports.flat().map((report) => ({
    area: "credentials" as const,
    server: report.server,
    status: report.status,
    message: report.message,
    ...(report.hint === undefined ? {} : { hint: report.hint }),
  }));
}

function nodeCheck(): Check {
  const version = process.versions.node;
  if (Number(version.split(".")[0]) >= NODE_MAJOR) {
    return { area: "node", status: "ok", message: `Node ${version}` };
  }
  return {
    area: "node",
    status: "fail",
    message: `Node ${version} is too old: mcplex needs Node ${NODE_MAJOR} or newer`,
    hint: `Install Node ${NODE_MAJOR} or newer (https://nodejs.org, or nvm install ${NODE_MAJOR}).`,
  };
}

/**
 * Whether a sandbox starts here, tried for real (an empty bwrap with every namespace): a `fail`
 * when the config sandboxes a server and it cannot, a `warn` when nothing asks for it.
 */
function sandboxCheck(config: McplexConfig): Check {
  const sandboxed = [...config.servers, ...(config.available ?? [])]
    .filter((server) => server.transport === "stdio" && server.sandbox)
    .map((server) => server.name);
  const support = probeSandbox({ fresh: true });
  const used = sandboxed.length === 0 ? "no server asks for it" : `for ${sandboxed.join(", ")}`;
  if (support.ok) {
    const limit =
      processLimitKind() === "cgroup"
        ? "processes capped by a pids cgroup"
        : "processes capped by RLIMIT_NPROC only (per user; root is exempt)";
    return {
      area: "sandbox",
      status: "ok",
      message: `bubblewrap (${support.bwrap}) works here, ${limit}; ${used}`,
    };
  }
  return {
    area: "sandbox",
    status: sandboxed.length === 0 ? "warn" : "fail",
    message: `servers cannot be sandboxed here (${used})`,
    hint: support.reason,
  };
}

/** Milliseconds from the hub's start to each server's first `ready`, filled in as they come. */
function readyTimes(hub: Hub): Map<string, number> {
  const start = performance.now();
  const times = new Map<string, number>();
  hub.on((event) => {
    if (event.type === "server-state" && event.state === "ready" && !times.has(event.server)) {
      times.set(event.server, Math.round(performance.now() - start));
    }
  });
  return times;
}

function serverChecks(
  hub: Hub,
  config: McplexConfig,
  summaries: readonly ServerSummary[],
  times: ReadonlyMap<string, number>,
): Check[] {
  return hub.servers().map((server): Check => {
    const name = server.name;
    if (!server.enabled) {
      return { area: "server", server: name, status: "skip", message: "disabled in the config" };
    }
    const own = hub.serverConfig(name);
    if (own !== undefined && isPerUser(own)) {
      const { credentials } = own;
      // Nothing shared to start: each signed-in user's first call opens that user's own.
      return {
        area: "server",
        server: name,
        status: "skip",
        message: `called with each user's own credentials (${typeof credentials === "string" ? credentials : "exchange"}): it starts on a signed-in user's first call`,
      };
    }
    if (server.state !== "ready") {
      return {
        area: "server",
        server: name,
        status: "fail",
        message: server.error ?? `${server.state}, with no error reported`,
        hint: failureHint(
          server,
          summaries.find((s) => s.name === name),
        ),
      };
    }
    const resources = hub.resources().filter((r) => r.server === name).length;
    const prompts = hub.prompts().filter((p) => p.server === name).length;
    const counts = `${count(server.tools, "tool")}, ${count(resources, "resource")}, ${count(prompts, "prompt")}`;
    const ms = times.get(name);
    const limit = config.servers.find((s) => s.name === name)?.startTimeout;
    const message = `ready${ms === undefined ? "" : ` in ${ms} ms`}: ${server.protocolVersion ?? "?"} over ${server.transport}; ${counts}`;
    const changes = hub.pinChanges(name);
    if (changes.length > 0) {
      const held = changes.filter((c) => c.held).length;
      const which = changes.map((c) => `${c.kind} ${c.tool}`).join(", ");
      return {
        area: "server",
        server: name,
        status: "warn",
        message: `${message}; its tools differ from those approved (${which})${held > 0 ? `, ${count(held, "tool")} held out of the catalog` : ""}`,
        hint: `Review the diff with \`mcplex trust ${name}\` (it prints it) or \`mcplex list\`; trust approves it in the lock file.`,
      };
    }
    if (ms !== undefined && limit !== undefined && ms > limit * SLOW_START_SHARE) {
      return {
        area: "server",
        server: name,
        status: "warn",
        message: `${message}; slow to start (its startTimeout is ${limit} ms)`,
        hint: `Raise startTimeout for ${name}, or mark it lazy: true so it starts on first use.`,
      };
    }
    return { area: "server", server: name, status: "ok", message };
  });
}

/** What to try when a server does not start: a longer start, its own hint, or its command by hand. */
function failureHint(server: ServerStatus, summary: ServerSummary | undefined): string {
  let byHand = "Run `mcplex list` for its state and error.";
  if (summary?.transport === "stdio")
    byHand = `Run its command by hand to see what it prints: ${summary.target}`;
  else if (summary !== undefined && summary.transport !== "workspace") {
    byHand = `Check that ${summary.target} is up and that its URL and headers are right.`;
  }
  if (server.error?.includes("did not finish starting")) {
    return `Raise startTimeout for ${server.name} if it is only slow, or ${lowerFirst(byHand)}`;
  }
  // A hint the message already quotes says nothing new.
  return server.hint !== undefined && server.error?.includes(server.hint) !== true ? server.hint : byHand;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/** "1 tool", "2 tools". */
export function count(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? "" : "s"}`;
}

function catalogChecks(hub: Hub): Check[] {
  const tools = hub.tools().length;
  let message = `${count(tools, "tool")}, ${count(hub.resources().length, "resource")}, ${count(hub.prompts().length, "prompt")}`;
  if (tools > PROVIDER_TOOL_LIMIT) {
    message += `; more tools than OpenAI's API takes (${PROVIDER_TOOL_LIMIT}), so mcplex chat lets the model search them`;
  }
  const checks: Check[] = [{ area: "catalog", status: "ok", message }];
  for (const collision of hub.catalog.collisions()) {
    const members = collision.members.map((m) => `${m.server}/${m.originalName} → ${m.exposedName}`);
    checks.push({
      area: "catalog",
      status: "warn",
      message: `${collision.kind} name "${collision.name}" is claimed by several: ${members.join(", ")}`,
      hint: "Give the servers distinct prefixes, or filter the tool you do not need.",
    });
  }
  return checks;
}

/** Whether `mcplex serve` could listen where it would. */
function portCheck(host: string, port: number): Promise<Check> {
  const where = hostPort(host, port);
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", (error: NodeJS.ErrnoException) => {
      const known = listenProblem(error.code, host, port);
      resolve({
        area: "serve",
        status: "warn",
        message: `mcplex serve cannot listen on ${where}: ${error.code ?? error.message}`,
        ...(known === undefined ? {} : { hint: known.hint }),
      });
    });
    server.listen({ host, port, exclusive: true }, () => {
      server.close(() =>
        resolve({ area: "serve", status: "ok", message: `${where} is free for mcplex serve` }),
      );
    });
  });
}

/** Whether the endpoint `mcplex chat` would use answers, takes the key and lists the model. */
async function llmCheck(
  config: McplexConfig | undefined,
  options: DoctorOptions,
  env: Record<string, string | undefined>,
): Promise<Check> {
  let llm: ReturnType<typeof resolveLlmConfig>;
  try {
    llm = resolveLlmConfig({ config: config?.llm, flags: options.llm, env });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const nothing = config?.llm === undefined && !env.MCPLEX_LLM_BASE_URL && !options.llm?.baseUrl;
    return {
      area: "llm",
      status: nothing ? "skip" : "warn",
      message: nothing ? "no LLM endpoint configured (only mcplex chat needs one)" : error.message,
      ...(error.hint === undefined ? {} : { hint: error.hint }),
    };
  }
  const where = redact(llm.baseUrl, config?.secrets ?? []);
  let response: Response;
  try {
    response = await fetch(`${llm.baseUrl}/models`, {
      headers: llm.apiKey === undefined ? {} : { authorization: `Bearer ${llm.apiKey}` },
      signal: AbortSignal.timeout(options.llmTimeout ?? 5000),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason =
      (error as Error).name === "TimeoutError"
        ? `no answer within ${options.llmTimeout ?? 5000} ms`
        : (cause?.code ?? cause?.message ?? (error as Error).message);
    return {
      area: "llm",
      status: "fail",
      message: `${where} does not answer: ${reason}`,
      hint: "Check the base URL and that the LLM server is running (e.g. ollama serve).",
    };
  }
  if (response.status === 401 || response.status === 403) {
    return {
      area: "llm",
      status: "fail",
      message: `${where} refused the API key (HTTP ${response.status})`,
      hint:
        llm.apiKey === undefined
          ? "Set MCPLEX_LLM_API_KEY, or llm.apiKey in the config from the secret store (mcplex secrets set)."
          : "Check MCPLEX_LLM_API_KEY or llm.apiKey: the endpoint does not accept it.",
    };
  }
  if (!response.ok) {
    return {
      area: "llm",
      status: "warn",
      message: `${where} answers, but GET /models gave HTTP ${response.status}, so the model could not be checked`,
    };
  }
  const body = (await response.json().catch(() => undefined)) as
    | { data?: Array<{ id?: unknown }> }
    | undefined;
  const models = (body?.data ?? []).map((m) => String(m.id));
  if (models.length > 0 && !models.includes(llm.model)) {
    return {
      area: "llm",
      status: "warn",
      message: `${where} answers, but does not list the model "${llm.model}"`,
      hint: `It lists: ${models.slice(0, 8).join(", ")}${models.length > 8 ? ", ..." : ""}. Pass --model or set llm.model.`,
    };
  }
  return { area: "llm", status: "ok", message: `${where} answers; model ${llm.model}` };
}
