import { readFile, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { ConfigError, McplexError } from "../errors.js";
import { configErrorFrom } from "./config-issues.js";
import { parseConfig } from "./parse-config.js";
import { SERVER_DEFAULTS } from "./read-server.js";
import type { SecretStore } from "./secret-store.js";
import type { McplexConfig } from "./types.js";

/** Config files looked for in the working directory, in this order. */
export const CONFIG_FILE_NAMES = ["mcplex.yaml", "mcplex.yml", "mcplex.json"] as const;

/** Options of {@link resolveConfigPath}. */
export interface ResolveConfigOptions {
  /** An explicit file (`--config FILE`), relative to `cwd`; it must exist. */
  config?: string;
  cwd: string;
}

/** Where `${secret:NAME}` values come from: a store, or a plain map (tests, embedding). */
export type SecretSource = Pick<SecretStore, "readAll"> | Readonly<Record<string, string>>;

/** Options of {@link loadConfig}. */
export interface LoadConfigOptions {
  /** An explicit file (`--config FILE`); otherwise found in `cwd`, else the embedded default. */
  config?: string;
  /** Default `process.cwd()`. */
  cwd?: string;
  /** Variables for `${VAR}`; default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Secrets for `${secret:NAME}`; default the user's {@link SecretStore}, opened only when referenced. */
  secrets?: SecretSource;
}

/**
 * Finds the config file: the explicit one (which must exist, else CONFIG_NOT_FOUND), else
 * the first of `mcplex.yaml`, `mcplex.yml`, `mcplex.json` in `cwd`. Returns `undefined` when
 * there is none, meaning the embedded default applies.
 */
export async function resolveConfigPath(options: ResolveConfigOptions): Promise<string | undefined> {
  if (options.config !== undefined) {
    const path = resolve(options.cwd, options.config);
    const kind = await fileKind(path);
    if (kind === "file") return path;
    throw new ConfigError(
      kind === "missing" ? `config file ${path} does not exist` : `config file ${path} is not a regular file`,
      {
        code: "CONFIG_NOT_FOUND",
        hint: "check the --config path, or leave it out to use mcplex.yaml in this directory",
      },
    );
  }
  for (const name of CONFIG_FILE_NAMES) {
    const path = resolve(options.cwd, name);
    if ((await fileKind(path)) === "file") return path;
  }
  return undefined;
}

async function fileKind(path: string): Promise<"file" | "other" | "missing"> {
  try {
    return (await stat(path)).isFile() ? "file" : "other";
  } catch {
    return "missing";
  }
}

/**
 * The config used when there is no file: one read-only workspace server named `workspace`
 * rooted at `cwd`.
 */
export function defaultConfig(cwd: string): McplexConfig {
  return {
    source: "<default>",
    format: "default",
    servers: [
      {
        name: "workspace",
        transport: "workspace",
        root: resolve(cwd),
        allowWrite: false,
        rules: [],
        ...SERVER_DEFAULTS,
        tools: {},
      },
    ],
    profiles: {},
    tokens: [],
    secrets: [],
  };
}

/**
 * Finds, reads, parses, validates and expands the config. Throws ConfigError (with every
 * problem in `issues`) or, when the secret store cannot be opened, SecretStoreError.
 *
 * @example
 * const config = await loadConfig({ config: args.config, cwd: process.cwd() });
 */
export async function loadConfig(options: LoadConfigOptions = {}): Promise<McplexConfig> {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const path = await resolveConfigPath({
    cwd,
    ...(options.config === undefined ? {} : { config: options.config }),
  });
  if (path === undefined) return defaultConfig(cwd);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const message = `cannot read the config file: ${(error as Error).message}`;
    throw configErrorFrom(path, [{ code: "CONFIG_NOT_FOUND", path: "", message }], [], error);
  }
  // The store is only opened when the file refers to it, so a missing or locked store
  // does not break configs that use no secrets.
  // Its code (and node:crypto) loads only then too: `mcplex serve` reads a config at every start.
  const secrets = text.includes("${secret:")
    ? await readSecrets(options.secrets ?? new (await import("./secret-store.js")).SecretStore({ env }))
    : undefined;
  return parseConfig(text, {
    source: path,
    env,
    cwd,
    ...(secrets === undefined ? {} : { secretResolver: (name: string) => secrets.get(name) }),
  });
}

async function readSecrets(source: SecretSource): Promise<ReadonlyMap<string, string>> {
  if (typeof source.readAll === "function") {
    try {
      return await (source as Pick<SecretStore, "readAll">).readAll();
    } catch (error) {
      if (error instanceof McplexError) throw error;
      throw new ConfigError(
        "cannot read the secret store",
        { code: "SECRET_STORE_INVALID" },
        { cause: error },
      );
    }
  }
  return new Map(Object.entries(source as Readonly<Record<string, string>>));
}
