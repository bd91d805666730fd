import { resolve } from "node:path";
import type { ServeOptions } from "../../assembly/serve.js";
import { isCatalogMode } from "../../catalog-modes/catalog-mode.js";
import { loadConfig } from "../../config/load-config.js";
import { readOrigin } from "../../config/origin-rules.js";
import { parseDuration } from "../../config/parse-duration.js";
import { AUDIT_TO_STDERR, DEFAULT_AUDIT_KEEP, DEFAULT_AUDIT_MAX_SIZE } from "../../config/read-audit.js";
import { clusterUrlProblem } from "../../config/read-cluster.js";
import { tokenProblem } from "../../config/token-rules.js";
import type { CatalogMode, McplexConfig, TokenConfig } from "../../config/types.js";
import { defaultCacheDir } from "../../recording/default-cache-dir.js";
import { serveDefinition } from "../definitions/serve.js";
import { UsageError } from "../output.js";
import { parseCommandArgs } from "../parse-command-args.js";
import { readExposeTools } from "./expose-tool-flag.js";
import { readLimitFlags } from "./serve-limits.js";

/** `mcplex serve`'s flags as given, by name. */
export type ServeFlagValues = Awaited<ReturnType<typeof parseServeArgs>>;

/** The flags of `mcplex serve`, read by the parser of its definition. */
export async function parseServeArgs(args: string[]) {
  return (await parseCommandArgs(serveDefinition, args)).values;
}

/** `mcplex serve`'s flags, each checked and read into what serving takes. */
export interface ServeFlags {
  stdio: boolean;
  exposeTools: string[];
  host: string;
  /** Unset: the HTTP front's default (DEFAULT_PORT). */
  port: number | undefined;
  dashboardPort: number | undefined;
  limits: ReturnType<typeof readLimitFlags>;
  allowedOrigins: string[];
  rateLimit: { perSecond: number; burst: number } | undefined;
  standIns: Pick<ServeOptions, "record" | "simulate" | "toolCache">;
  readyWait: number | undefined;
  mode: CatalogMode | undefined;
}

/**
 * Every flag that needs no config, checked in the order a user reads them: a mistake is a
 * usage error naming the flag, before any config is read.
 */
export async function readServeFlags(values: ServeFlagValues): Promise<ServeFlags> {
  if (values.stdio === true && (values.http === true || values.ws === true)) {
    throw new UsageError("choose --stdio or --http/--ws, not both");
  }
  const stdio = readTransport(values) === "stdio";
  const exposeTools = await readExposeTools(values);
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
  const readyWait = values["ready-wait"] === undefined ? undefined : parseReadyWait(values["ready-wait"]);
  const mode = values.tools === undefined ? undefined : toolsMode(values.tools);
  const host = values.host ?? "127.0.0.1";
  return {
    stdio,
    exposeTools,
    host,
    port,
    dashboardPort,
    limits,
    allowedOrigins,
    rateLimit,
    standIns,
    readyWait,
    mode,
  };
}

/** The config as `--config` (or the default) reads, with `--cluster` and `--audit` applied. */
export async function readServeConfig(values: ServeFlagValues): Promise<McplexConfig> {
  const loaded = await loadConfig(values.config === undefined ? {} : { config: values.config });
  const clustered = values.cluster === undefined ? loaded : withClusterUrl(loaded, values.cluster);
  const config = values.audit === undefined ? clustered : withAuditTo(clustered, values.audit);
  if (config.cluster !== undefined && values.stdio === true)
    throw new UsageError(
      "cluster mode (cluster: or --cluster) is for --http: a stdio client has one process",
    );
  return config;
}

/**
 * `--token` and `--operator-token`, each checked, bound to `--profile`. An operator token may
 * also read /metrics and /readyz; for MCP it is bound like the others.
 */
export function readTokenFlags(values: ServeFlagValues): TokenConfig[] {
  const profileOf = values.profile === undefined ? {} : { profile: values.profile };
  const checked = (flag: string, list: string[]) =>
    list.map((token, i) => {
      const problem = tokenProblem(token);
      if (problem !== undefined)
        throw new UsageError(`${flag}${list.length > 1 ? ` #${i + 1}` : ""} ${problem}`);
      return token;
    });
  return [
    ...checked("--token", values.token ?? []).map((token) => ({ token, ...profileOf })),
    ...checked("--operator-token", values["operator-token"] ?? []).map((token) => ({
      token,
      ...profileOf,
      operator: true,
    })),
  ];
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
