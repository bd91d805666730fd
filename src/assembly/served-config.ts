import { EXPOSED_PROFILE, exposedTokens, exposeTools } from "../config/expose-tools.js";
import type { McplexConfig, TokenConfig } from "../config/types.js";
import type { SimulatedServer } from "../recording/simulated-servers.js";

/** What {@link servedConfigOf} reads of `serve()`'s options. */
export interface ServedConfigOptions {
  config: McplexConfig;
  tokens?: TokenConfig[];
  profile?: string;
  noPrefix?: boolean;
  exposeTools?: readonly string[];
  record?: string;
  simulate?: { seed: number; cacheDir: string; speed?: number; all: boolean };
  toolCache?: string;
}

/** The config `serve()` serves, and how it makes the same of a reloaded one. */
export interface ServedConfig {
  /** The config as served: exposed tools only, prefixes dropped when asked, tokens redacted, stand-ins in. */
  config: McplexConfig;
  /** The servers replaced by a recording or a simulator, and by which. */
  simulated: SimulatedServer[];
  /** The config's tokens and the command line's, each bound to the exposed profile when tools are exposed. */
  tokens: TokenConfig[];
  /** The profile of clients that present no profile-bound token (and of the stdio client). */
  profileName: string | undefined;
  /** A reloaded config, as served (its own tokens redacted). */
  reserve(next: McplexConfig): McplexConfig;
}

/**
 * The config `serve()` works on: its own copy of `options.config`, with `--expose-tool`,
 * `--no-prefix`, `--record` and `--simulate` applied, and every token redacted.
 */
export async function servedConfigOf(options: ServedConfigOptions): Promise<ServedConfig> {
  const expose = options.exposeTools ?? [];
  const tokens = exposedTokens([...options.config.tokens, ...(options.tokens ?? [])], expose);
  const standIns = await standInsOf(options);
  const served = (next: McplexConfig, nextTokens: readonly TokenConfig[]) =>
    standIns(servedConfig(exposeTools(next, expose), options.noPrefix === true, nextTokens));
  const { config, simulated } = served(options.config, tokens);
  return {
    config,
    simulated,
    tokens,
    profileName: options.profile ?? (expose.length > 0 ? EXPOSED_PROFILE : undefined),
    reserve: (next) => served(next, exposedTokens(next.tokens, expose)).config,
  };
}

/**
 * What replaces servers for `--record` and `--simulate` (loaded only then): recorded servers get
 * a `record` block, simulated ones become replays of a recording or simulators of a tool list.
 */
async function standInsOf(
  options: ServedConfigOptions,
): Promise<(config: McplexConfig) => { config: McplexConfig; simulated: SimulatedServer[] }> {
  const { record, simulate } = options;
  const wanted = (config: McplexConfig) =>
    record !== undefined || simulate !== undefined || config.servers.some((s) => s.simulate === true);
  if (!wanted(options.config)) return (config) => ({ config, simulated: [] });
  const { recordedConfig, simulatedConfig } = await import("../recording/simulated-servers.js");
  const { defaultCacheDir } = await import("../recording/default-cache-dir.js");
  return (config) => {
    // Simulated servers read the recording directory; they never write to it.
    const recorded = record === undefined || simulate !== undefined ? config : recordedConfig(config, record);
    return simulatedConfig(recorded, {
      all: simulate?.all ?? false,
      seed: simulate?.seed ?? 1,
      cacheDir: simulate?.cacheDir ?? options.toolCache ?? defaultCacheDir(),
      ...(record === undefined ? {} : { recordDir: record }),
      ...(simulate?.speed === undefined ? {} : { speed: simulate.speed }),
    });
  };
}

/** The config as served: a copy, with prefixes dropped when asked and every token redacted. */
function servedConfig(config: McplexConfig, noPrefix: boolean, tokens: readonly TokenConfig[]): McplexConfig {
  return {
    ...config,
    servers: noPrefix ? config.servers.map((server) => ({ ...server, prefix: "" })) : config.servers,
    ...(noPrefix && config.available !== undefined
      ? { available: config.available.map((server) => ({ ...server, prefix: "" })) }
      : {}),
    secrets: [...config.secrets, ...tokens.map((t) => t.token)],
  };
}
