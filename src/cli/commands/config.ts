import { parseArgs } from "node:util";
import { checkConfig } from "../../config/check-config.js";
import { EXIT, printError, UsageError } from "../output.js";

/** `mcplex config check [--config F] [--json]`: validates without connecting. */
export async function configCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== "check") throw new UsageError('config has one subcommand: "mcplex config check [--config F]"');
  const { values } = parseArgs({
    args: rest,
    options: { config: { type: "string", short: "c" }, json: { type: "boolean" } },
  });
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
  console.log(`${summary.source} (${summary.format}): ${summary.servers.length} servers`);
  for (const server of summary.servers) {
    const flags = [server.enabled ? "" : "disabled", server.lazy ? "lazy" : ""].filter(Boolean).join(", ");
    console.log(`  ${server.name}  ${server.transport}  ${server.target}${flags ? `  (${flags})` : ""}`);
  }
  for (const profile of summary.profiles) {
    const servers = profile.servers === "all" ? "all servers" : profile.servers.join(", ");
    console.log(`  profile ${profile.name}: ${servers}`);
  }
  for (const warning of summary.warnings) console.log(`warning: ${warning.path}: ${warning.message}`);
  console.log(summary.warnings.length === 0 ? "ok" : `ok, with ${summary.warnings.length} warnings`);
  return EXIT.ok;
}
