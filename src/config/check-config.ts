import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import picomatch from "picomatch";
import { ConfigError, type ConfigIssue, McplexError } from "../errors.js";
import { joinPath } from "./config-issues.js";
import { type LoadConfigOptions, loadConfig } from "./load-config.js";
import { AUDIT_TO_STDERR } from "./read-audit.js";
import { isPerUser } from "./read-credentials.js";
import { redact } from "./redact.js";
import type { AuditConfig, McplexConfig, ToolFilter, TransportKind } from "./types.js";

/** Something legal but probably not what the user meant; `path` as in {@link ConfigIssue}. */
export interface ConfigWarning {
  path: string;
  message: string;
}

/** One server as `mcplex config check` shows it; `target` is redacted. */
export interface ServerSummary {
  name: string;
  transport: TransportKind;
  enabled: boolean;
  lazy: boolean;
  /** The prefix exposed names get (`""` for none), as the catalog will apply it. */
  prefix: string;
  /** Command line, URL, or workspace root with its mode; secrets replaced by `***`. */
  target: string;
  timeout: number;
  startTimeout: number;
  /** Present when the server runs in a sandbox (`sandbox:`, its own or the top-level default). */
  sandboxed?: true;
}

/** What a config holds, for printing. */
export interface ConfigSummary {
  source: string;
  format: McplexConfig["format"];
  servers: ServerSummary[];
  profiles: Array<{ name: string; servers: string[] | "all" }>;
  /** Servers a switch turned off all at once, as in `McplexConfig.disabledBlock`. */
  disabledBlock?: { path: string; servers: string[] };
  tokens: number;
  llm?: { baseUrl?: string; model?: string; provider?: string; apiKey: boolean };
  /** The audit trail (`audit:`): where it goes, its rotation, whether it holds content. */
  audit?: AuditConfig;
  warnings: ConfigWarning[];
}

/** Result of {@link checkConfig}: a summary, or every problem that stopped loading. */
export type ConfigCheck =
  | { ok: true; summary: ConfigSummary; config: McplexConfig }
  | { ok: false; error: McplexError; issues: ConfigIssue[] };

/** Where a config's servers are written, for the paths of warnings. */
function serversPath(config: McplexConfig): string {
  switch (config.format) {
    case "mcpServers":
    case "mcp_servers":
      return config.format;
    case "mcp-client-servers":
      return "mcp.client.servers";
    case "server-map":
      return "";
    default:
      return "servers";
  }
}

/** Where one server is written (a `mcp_servers` one under an agent is shown at the top). */
function serverPath(config: McplexConfig, name: string): string {
  if (config.format !== "mcp-client-servers") return joinPath(serversPath(config), name);
  return joinPath(
    "mcp.client.servers",
    config.servers.findIndex((s) => s.name === name),
  );
}

/** The prefix the catalog derives: the configured one or the server name, made LLM-safe. */
function effectivePrefix(prefix: string | undefined, name: string): string {
  return (prefix ?? name).replace(/[^A-Za-z0-9_-]/g, "_");
}

/**
 * The warning for servers a switch turned off all at once (`mcp.client.enabled: false`), so
 * that an empty catalog is explained wherever it shows.
 */
export function disabledBlockWarning(config: McplexConfig): ConfigWarning | undefined {
  if (config.disabledBlock === undefined) return undefined;
  const { path, servers } = config.disabledBlock;
  const unused =
    servers.length === 0
      ? "no server is used"
      : `its servers (${servers.join(", ")}) are checked but not used`;
  return { path, message: `is false: the block is disabled, so ${unused}; set it to true to use them` };
}

/**
 * Summarises a loaded config and lists warnings: profiles or tokens naming what does not
 * exist, servers whose prefixes collide, tool globs that cannot compile, no enabled server.
 * Pure: no file system, no network.
 */
export function summarizeConfig(config: McplexConfig): ConfigSummary {
  const warnings: ConfigWarning[] = [];
  const base = serversPath(config);
  // A profile may name `available:` servers too: they are the ones it may connect; and the
  // servers of a disabled block, which it sees again once the block is enabled.
  const names = new Set([
    ...[...config.servers, ...(config.available ?? [])].map((s) => s.name),
    ...(config.disabledBlock?.servers ?? []),
  ]);
  const byPrefix = new Map<string, string[]>();
  const servers = config.servers.map((server): ServerSummary => {
    const prefix = effectivePrefix(server.prefix, server.name);
    if (server.enabled) byPrefix.set(prefix, [...(byPrefix.get(prefix) ?? []), server.name]);
    checkGlobs(server.tools, joinPath(serverPath(config, server.name), "tools"), warnings);
    const target =
      server.transport === "stdio"
        ? [server.command, ...server.args].map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(" ")
        : server.transport === "workspace"
          ? `${server.root} (${server.allowWrite ? "read-write" : "read-only"})`
          : server.transport === "local"
            ? "(in process)"
            : server.transport === "replay"
              ? server.recording.join(", ") || "(simulated from its tool list)"
              : server.url;
    const { name, transport, enabled, lazy, timeout, startTimeout } = server;
    return {
      name,
      transport,
      enabled,
      lazy,
      prefix,
      target: redact(target, config.secrets),
      timeout,
      startTimeout,
      ...(server.transport === "stdio" && server.sandbox ? { sandboxed: true as const } : {}),
    };
  });
  for (const [prefix, owners] of byPrefix) {
    if (owners.length < 2) continue;
    const message =
      prefix === ""
        ? `servers ${owners.join(", ")} all expose unprefixed names; equal tool names will be renamed`
        : `servers ${owners.join(", ")} share the name prefix "${prefix}"; set a distinct "prefix" on one`;
    warnings.push({ path: serverPath(config, owners[1]!), message });
  }
  // Per-user servers are called for signed-in users only: without sign-in, every call is refused.
  if (config.auth === undefined) {
    for (const server of [...config.servers, ...(config.available ?? [])]) {
      if (!isPerUser(server)) continue;
      warnings.push({
        path: joinPath(serverPath(config, server.name), "credentials"),
        message:
          "this server is called with each signed-in user's own credentials, but no one signs in (there is no auth: block), so every call to it is refused; add auth: (see Sign-in in the README) or remove credentials:",
      });
    }
  }
  // Connect links sign their user in at the gateway's provider, with auth.dashboard's client or
  // one the gateway registers there (RFC 7591), which many providers do not allow.
  if (
    config.auth !== undefined &&
    config.auth.dashboard?.clientId === undefined &&
    [...config.servers, ...(config.available ?? [])].some((s) => s.credentials === "per-user")
  ) {
    const resource = config.auth.resource ?? "<the gateway's URL>";
    warnings.push({
      path: "auth.dashboard.clientId",
      message: `per-user servers' connect links sign their user in at the gateway's identity provider with a client the gateway registers there itself (RFC 7591); a provider that allows no registration refuses every connect: register a public client (no secret, redirect URIs ${resource}/connect/-/signed-in and ${resource}/dashboard) and set auth.dashboard.clientId`,
    });
  }
  const off = disabledBlockWarning(config);
  if (off !== undefined) warnings.push(off);
  if (config.servers.length > 0 && !config.servers.some((s) => s.enabled)) {
    warnings.push({ path: base, message: "no server is enabled" });
  }
  const profiles = Object.entries(config.profiles).map(([name, profile]) => {
    const path = joinPath("profiles", name);
    profile.servers?.forEach((server, i) => {
      if (!names.has(server)) {
        warnings.push({
          path: joinPath(joinPath(path, "servers"), i),
          message: `unknown server "${server}"`,
        });
      }
    });
    checkGlobs(profile.tools, joinPath(path, "tools"), warnings);
    return { name, servers: profile.servers ?? ("all" as const) };
  });
  const seen = new Set<string>();
  config.tokens.forEach((token, i) => {
    const path = joinPath("tokens", i);
    if (token.profile !== undefined && !(token.profile in config.profiles)) {
      warnings.push({ path: joinPath(path, "profile"), message: `unknown profile "${token.profile}"` });
    }
    if (seen.has(token.token)) warnings.push({ path: joinPath(path, "token"), message: "is used twice" });
    seen.add(token.token);
  });
  const summary: ConfigSummary = {
    source: config.source,
    format: config.format,
    servers,
    profiles,
    ...(config.disabledBlock && { disabledBlock: config.disabledBlock }),
    tokens: config.tokens.length,
    warnings,
  };
  if (config.audit !== undefined) summary.audit = { ...config.audit };
  if (config.llm !== undefined) {
    const { baseUrl, model, provider, apiKey } = config.llm;
    summary.llm = {
      ...(baseUrl === undefined ? {} : { baseUrl: redact(baseUrl, config.secrets) }),
      ...(model === undefined ? {} : { model }),
      ...(provider === undefined ? {} : { provider }),
      apiKey: apiKey !== undefined,
    };
  }
  return summary;
}

function checkGlobs(filter: ToolFilter, path: string, warnings: ConfigWarning[]): void {
  for (const key of ["allow", "deny"] as const) {
    filter[key]?.forEach((glob, i) => {
      try {
        picomatch.makeRe(glob, { strictBrackets: true });
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        warnings.push({
          path: joinPath(joinPath(path, key), i),
          message: `glob "${glob}" is invalid: ${reason}`,
        });
      }
    });
  }
}

/**
 * Loads and validates the config without connecting to anything, for `mcplex config check`.
 * Besides {@link summarizeConfig}'s warnings, it checks the local file system: workspace
 * roots and `cwd`s exist, stdio commands are found on PATH. Config and secret-store problems
 * come back as `{ ok: false }`; other errors are thrown.
 */
export async function checkConfig(options: LoadConfigOptions = {}): Promise<ConfigCheck> {
  let config: McplexConfig;
  try {
    config = await loadConfig(options);
  } catch (error) {
    if (!(error instanceof McplexError)) throw error;
    const message = error.hint === undefined ? error.message : `${error.message}; ${error.hint}`;
    const issues = error instanceof ConfigError ? error.issues : [{ code: error.code, path: "", message }];
    return { ok: false, error, issues };
  }
  const summary = summarizeConfig(config);
  const env = options.env ?? process.env;
  const audit = config.audit === undefined ? undefined : await auditFileProblem(config.audit.to);
  if (audit !== undefined) summary.warnings.push({ path: "audit.to", message: audit });
  for (const server of config.servers) {
    const path = serverPath(config, server.name);
    if (server.transport === "workspace" && !(await isDirectory(server.root))) {
      summary.warnings.push({
        path: joinPath(path, "root"),
        message: `directory ${server.root} does not exist`,
      });
    }
    if (server.transport !== "stdio" || !server.enabled) continue;
    if (server.cwd !== undefined && !(await isDirectory(server.cwd))) {
      summary.warnings.push({
        path: joinPath(path, "cwd"),
        message: `directory ${server.cwd} does not exist`,
      });
    }
    const dir = server.cwd ?? options.cwd ?? process.cwd();
    if (!(await findExecutable(server.command, server.env.PATH ?? env.PATH ?? "", dir))) {
      summary.warnings.push({
        path: joinPath(path, "command"),
        message: `"${server.command}" is not found on PATH`,
      });
    }
  }
  return { ok: true, summary, config };
}

/** Why `mcplex serve` could not open the audit file `to` (never opened here), or `undefined`. */
async function auditFileProblem(to: string): Promise<string | undefined> {
  if (to === AUDIT_TO_STDERR) return undefined;
  const file = await stat(to).catch(() => undefined);
  if (file !== undefined) return file.isFile() ? undefined : `${to} is not a regular file`;
  if (!(await isDirectory(dirname(to))))
    return `directory ${dirname(to)} does not exist, so the audit file cannot be created`;
  return undefined;
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

async function findExecutable(command: string, pathVar: string, cwd: string): Promise<boolean> {
  if (process.platform === "win32") return true; // PATHEXT lookup is not worth guessing at here
  const candidates = command.includes("/")
    ? [isAbsolute(command) ? command : resolve(cwd, command)]
    : pathVar
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, command));
  for (const candidate of candidates) {
    const ok = await access(candidate, constants.X_OK).then(
      () => true,
      () => false,
    );
    if (ok && (await stat(candidate)).isFile()) return true;
  }
  return false;
}
