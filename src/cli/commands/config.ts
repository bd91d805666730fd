import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { checkConfig } from "../../config/check-config.js";
import { configErrorFrom } from "../../config/config-issues.js";
import { convertConfig } from "../../config/convert-config.js";
import { AUDIT_TO_STDERR } from "../../config/read-audit.js";
import type { McplexConfig } from "../../config/types.js";
import { configCheckDefinition, configConvertDefinition } from "../definitions/config.js";
import { EXIT, printError, UsageError } from "../output.js";
import { parseCommandArgs } from "../parse-command-args.js";

/** How `config check` names the shape it read. */
const SHAPES: Record<McplexConfig["format"], string> = {
  mcplex: "mcplex file",
  mcpServers: "Claude Desktop / Cursor mcpServers",
  vscode: "VS Code servers",
  "mcp-client-servers": "mcp.client.servers list",
  "server-map": "map of servers by id",
  mcp_servers: "mcp_servers map",
  default: "no file: the default workspace server",
};

const USAGE = `config has two subcommands: "${configCheckDefinition.usage}" and "${configConvertDefinition.usage}"`;

/**
 * `mcplex config check [--config F] [--json]`: validates without connecting.
 * `mcplex config convert FILE`: prints the file as an mcplex.yaml.
 */
export async function configCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === "convert") return convertCommand(rest);
  if (sub !== "check") throw new UsageError(USAGE);
  const { values } = await parseCommandArgs(configCheckDefinition, rest);
  const check = await checkConfig(values.config === undefined ? {} : { config: values.config });
  if (!check.ok) {
    if (values.json === true) {
      console.log(JSON.stringify({ ok: false, error: check.error.message, issues: check.issues }));
    } else {
      printError(check.error);
    }
    return EXIT.usage;
  }
  const { summary } = check;
  if (values.json === true) {
    console.log(JSON.stringify({ ok: true, ...summary }));
    return EXIT.ok;
  }
  const off = summary.disabledBlock;
  const offNote = off === undefined ? "" : ` (and ${off.servers.length} turned off by ${off.path}: false)`;
  console.log(`${summary.source} (${summary.format}): ${summary.servers.length} servers${offNote}`);
  console.log(`  shape: ${SHAPES[summary.format]}`);
  for (const server of summary.servers) {
    const flags = [
      server.enabled ? "" : "disabled",
      server.lazy ? "lazy" : "",
      server.sandboxed ? "sandboxed" : "",
    ]
      .filter(Boolean)
      .join(", ");
    console.log(`  ${server.name}  ${server.transport}  ${server.target}${flags ? `  (${flags})` : ""}`);
  }
  for (const profile of summary.profiles) {
    const servers = profile.servers === "all" ? "all servers" : profile.servers.join(", ");
    console.log(`  profile ${profile.name}: ${servers}`);
  }
  if (summary.audit !== undefined) {
    const { to, maxSize, keep, content } = summary.audit;
    const rotation = to === AUDIT_TO_STDERR ? "" : `, rotated at ${maxSize} bytes, ${keep} kept`;
    console.log(`  audit: ${to}${rotation}${content ? ", with arguments and results (redacted)" : ""}`);
  }
  for (const warning of summary.warnings) console.log(`warning: ${warning.path}: ${warning.message}`);
  console.log(summary.warnings.length === 0 ? "ok" : `ok, with ${summary.warnings.length} warnings`);
  return EXIT.ok;
}

/** `mcplex config convert FILE`: the equivalent mcplex.yaml on stdout, references kept. */
async function convertCommand(args: string[]): Promise<number> {
  const { positionals } = await parseCommandArgs(configConvertDefinition, args, { allowPositionals: true });
  const [file, ...extra] = positionals;
  if (file === undefined || extra.length > 0)
    throw new UsageError("config convert takes one file: mcplex config convert FILE > mcplex.yaml");
  const path = resolve(file);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const message = `cannot read the config file: ${(error as Error).message}`;
    throw configErrorFrom(path, [{ code: "CONFIG_NOT_FOUND", path: "", message }], [], error);
  }
  const { format, yaml } = convertConfig(text, { source: path });
  process.stdout.write(yaml);
  console.error(`mcplex: converted ${path} (${SHAPES[format]}); review it, then save it as mcplex.yaml`);
  return EXIT.ok;
}
