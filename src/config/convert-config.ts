import { stringify } from "yaml";
import { ConfigError } from "../errors.js";
import { configErrorFrom } from "./config-issues.js";
import { mcplexDocument } from "./mcplex-document.js";
import { type ConfigFormat, type ParseConfigOptions, parseConfig } from "./parse-config.js";
import { ReferenceKeeper, restoreReferences } from "./value-reader.js";

/** What {@link convertConfig} gives: the dialect it read, and the same servers as an mcplex.yaml. */
export interface ConvertedConfig {
  format: ConfigFormat;
  yaml: string;
}

/**
 * Reads a config file in any dialect and writes it as an mcplex.yaml: loading the output gives
 * the same servers and profiles. `${VAR}` and `${secret:NAME}` references stay references (no
 * variable needs to be set, the secret store is not opened); checks that need a value (a URL's
 * scheme) see the variable from `options.env`, or "" when it is unset. A reference in a
 * true/false or number field is written as its value.
 *
 * @example
 * const { yaml } = convertConfig(readFileSync("agents.yaml", "utf8"), { source: "agents.yaml" });
 */
export function convertConfig(text: string, options: ParseConfigOptions): ConvertedConfig {
  const keeper = new ReferenceKeeper();
  let config: ReturnType<typeof parseConfig>;
  try {
    config = parseConfig(text, { ...options, keepReferences: keeper });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw configErrorFrom(options.source, restoreReferences(error.issues, keeper), [], error);
  }
  const doc = restoreReferences(mcplexDocument(config), keeper);
  const header = `# mcplex config, converted from ${options.source} (${config.format}) by \`mcplex config convert\`\n`;
  return { format: config.format as ConfigFormat, yaml: header + stringify(doc, { lineWidth: 0 }) };
}
