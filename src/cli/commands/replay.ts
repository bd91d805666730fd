import { loadConfig } from "../../config/load-config.js";
import { RpcError } from "../../errors.js";
import { ANSWERING_CAPABILITIES } from "../../protocol/server-requests.js";
import { type LiveAnswer, type VerifyReport, verifyRecording } from "../../recording/answer-drift.js";
import { ReplayBook } from "../../recording/replay-book.js";
import { Upstream } from "../../upstream/upstream.js";
import { replayVerifyDefinition } from "../definitions/replay.js";
import { nearestNames } from "../nearest-names.js";
import { EXIT, UsageError } from "../output.js";
import { parseCommandArgs } from "../parse-command-args.js";

const USAGE = replayVerifyDefinition.usage;

/**
 * `mcplex replay verify FILE --server NAME`: sends a recording's requests to the live server and
 * reports every answer that changed. Exit 0 when none did, 1 when any did.
 */
export async function replayCommand(args: string[]): Promise<number> {
  const { values, positionals } = await parseCommandArgs(replayVerifyDefinition, args, {
    allowPositionals: true,
  });
  const [sub, file, ...extra] = positionals;
  if (sub !== "verify") throw new UsageError(`replay takes one subcommand, verify: ${USAGE}`);
  if (file === undefined || extra.length > 0) throw new UsageError(`replay verify needs one FILE: ${USAGE}`);
  if (values.server === undefined) throw new UsageError(`replay verify needs --server NAME: ${USAGE}`);
  const book = ReplayBook.read([file]);
  const config = await loadConfig(values.config === undefined ? {} : { config: values.config });
  const server = config.servers.find((s) => s.name === values.server);
  if (server === undefined) {
    const names = config.servers.map((s) => s.name);
    const near = nearestNames(values.server, names);
    throw new UsageError(
      `no server "${values.server}" in ${config.source}` +
        (near.length > 0 ? `; did you mean ${near.join(", ")}?` : `; servers: ${names.join(", ") || "none"}`),
    );
  }
  // The capabilities `mcplex serve` declares, with which recordings are made: servers such as
  // server-everything list more tools to a client that can answer their requests.
  const upstream = new Upstream(server, {
    clientInfo: { name: "mcplex", version: "0.1.0" },
    clientCapabilities: ANSWERING_CAPABILITIES,
    onEvent: () => {},
  });
  let report: VerifyReport;
  try {
    await upstream.start();
    report = await verifyRecording(
      book,
      async (method, params): Promise<LiveAnswer> => {
        const { _meta: _, ...sent } = params;
        try {
          return { result: await upstream.request(method, sent) };
        } catch (error) {
          if (error instanceof RpcError) return { error: error.toJSON() };
          throw error;
        }
      },
      { tools: upstream.tools },
    );
  } finally {
    await upstream.close();
  }
  if (values.json === true) console.log(JSON.stringify({ server: server.name, file, ...report }, null, 2));
  else printReport(report, server.name, file);
  return report.drifts.length === 0 ? EXIT.ok : EXIT.toolError;
}

function printReport(report: VerifyReport, server: string, file: string): void {
  if (report.drifts.length === 0) {
    console.log(`${server}: all ${report.checked} recorded answers are unchanged (${file})`);
    return;
  }
  console.log(`${server}: ${report.drifts.length} answer(s) changed since ${file} was recorded:`);
  for (const drift of report.drifts) {
    const what =
      drift.index === 0 ? "the tool list" : `#${drift.index} ${drift.method} ${short(drift.params)}`;
    console.log(`  ${what}`);
    for (const d of drift.differences)
      console.log(`    ${d.path || "(whole answer)"}: recorded ${short(d.recorded)}, now ${short(d.live)}`);
  }
}

function short(value: unknown): string {
  const text = value === undefined ? "(absent)" : JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
