import { doctorDefinition } from "../definitions/doctor.js";
import { type Check, count, runDoctor } from "../doctor.js";
import { EXIT, UsageError } from "../output.js";
import { parseCommandArgs } from "../parse-command-args.js";

/**
 * `mcplex doctor`: checks Node, the config, every server (started for real), the catalog,
 * the port `serve` would take and the LLM endpoint `chat` would use, and says what to fix.
 * Exit 0 when nothing failed, 2 when the config cannot be used, 3 when something is unavailable.
 */
export async function doctorCommand(args: string[]): Promise<number> {
  const { values } = await parseCommandArgs(doctorDefinition, args);
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536)) {
    throw new UsageError(`doctor: --port must be a port number (0-65535), not "${values.port}"`);
  }
  const checks = await runDoctor({
    ...(values.config === undefined ? {} : { config: values.config }),
    ...(values.host === undefined ? {} : { host: values.host }),
    ...(port === undefined ? {} : { port }),
    llm: {
      ...(values["base-url"] === undefined ? {} : { baseUrl: values["base-url"] }),
      ...(values.model === undefined ? {} : { model: values.model }),
    },
  });
  const failed = checks.filter((c) => c.status === "fail");
  const exit = failed.some((c) => c.area === "config")
    ? EXIT.usage
    : failed.length > 0
      ? EXIT.unavailable
      : EXIT.ok;
  if (values.json === true) {
    console.log(JSON.stringify({ ok: failed.length === 0, checks }));
    return exit;
  }
  for (const check of checks) console.log(format(check));
  const warnings = checks.filter((c) => c.status === "warn").length;
  console.log(
    failed.length > 0
      ? `\n${count(failed.length, "problem")}${warnings > 0 ? ` and ${count(warnings, "warning")}` : ""}: see "fail" above.`
      : warnings > 0
        ? `\nNo problems; ${count(warnings, "warning")}.`
        : "\nAll checks passed.",
  );
  return exit;
}

function format(check: Check): string {
  const subject = check.server === undefined ? check.area : `${check.area} ${check.server}`;
  const indent = "".padEnd(24);
  // A server's error may carry its stderr: every line of it goes under the first.
  const message = check.message.split("\n").join(`\n${indent} `);
  const lines = [`${check.status.padEnd(5)} ${subject.padEnd(18)} ${message}`];
  if (check.hint !== undefined && check.status !== "ok") lines.push(`${indent} hint: ${check.hint}`);
  return lines.join("\n");
}
