import { createInterface } from "node:readline";
import type { AgentEvent } from "../../agent/agent-events.js";
import type { ChatMessage } from "../../agent/chat-types.js";
import { resolveLlmConfig } from "../../agent/llm-config.js";
import { runAgent } from "../../agent/run-agent.js";
import { withoutHiddenTools } from "../../agent/tool-host.js";
import type { CatalogTool } from "../../catalog/types.js";
import { isCatalogMode } from "../../catalog-modes/catalog-mode.js";
import type { CatalogMode, McplexConfig } from "../../config/types.js";
import { McplexError } from "../../errors.js";
import type { Hub } from "../../hub/hub.js";
import { chatDefinition } from "../definitions/chat.js";
import { exitCodeOf } from "../error-report.js";
import { withHub } from "../hub-session.js";
import { EXIT, UsageError } from "../output.js";
import { parseCommandArgs } from "../parse-command-args.js";
import { terminalText } from "../terminal-text.js";

/**
 * `mcplex chat`: the agent loop on the catalog. The answer's text goes to stdout, tool
 * activity to stderr; `--json` prints one event per line. Without `-p` it reads prompts
 * from stdin and keeps the conversation.
 */
export async function chatCommand(args: string[]): Promise<number> {
  const { values } = await parseCommandArgs(chatDefinition, args);
  if (values.tools !== undefined && !isCatalogMode(values.tools))
    throw new UsageError(`--tools must be all, search or code, not ${JSON.stringify(values.tools)}`);
  const maxSteps = values["max-steps"] === undefined ? undefined : Number(values["max-steps"]);
  return withHub(
    values.config === undefined ? {} : { config: values.config },
    async (hub, config, telemetry, interrupted, built) => {
      const llm = resolveLlmConfig({
        config: config.llm,
        flags: {
          ...(values["base-url"] === undefined ? {} : { baseUrl: values["base-url"] }),
          ...(values.model === undefined ? {} : { model: values.model }),
        },
        env: process.env,
      });
      // The model sees the catalog through the mode asked for, else its profile's.
      const profileMode = values.profile === undefined ? undefined : config.profiles[values.profile]?.mode;
      const mode = (values.tools as CatalogMode | undefined) ?? profileMode ?? "all";
      // What a policy denies this machine's user whatever the arguments is not offered.
      const visible = withoutHiddenTools(hub, (tool) => {
        const found = hub.catalog.resolveTool(tool.name, values.profile);
        return found !== undefined && built.hides(found, values.profile);
      });
      const tools =
        mode === "all"
          ? visible
          : await modeToolHost(
              hub,
              (tool, profile) => built.hides(tool, profile),
              {
                mode,
                pin:
                  (values.profile === undefined ? undefined : config.profiles[values.profile]?.pin) ??
                  config.serve?.pin ??
                  [],
              },
              config.serve?.code,
            );
      const history: ChatMessage[] = [];
      const turn = async (prompt: string, signal: AbortSignal): Promise<number> => {
        history.push({ role: "user", content: prompt });
        const run = runAgent({
          ...(telemetry === undefined ? {} : { tracer: telemetry.agent }),
          hub: tools,
          llm,
          messages: [...history],
          signal,
          ...(values.profile === undefined ? {} : { profile: values.profile }),
          ...(maxSteps === undefined ? {} : { maxSteps }),
        });
        let code: number = EXIT.ok;
        let failure: unknown;
        for await (const event of run) {
          if (event.type === "error") failure = event.error;
          if (values.json === true) {
            console.log(JSON.stringify(event, errorReplacer));
          } else {
            printEvent(event);
          }
          if (event.type === "done") {
            history.splice(0, history.length, ...event.messages);
            if (event.outcome === "aborted") code = EXIT.error;
            // An LLM that cannot be reached is "unavailable" (3), a refused key a config error (2).
            if (event.outcome === "error") code = failure === undefined ? EXIT.error : exitCodeOf(failure);
          }
        }
        return code;
      };

      // Ctrl-C ends the turn: a tool's task still running at its server is cancelled there.
      const signal = interrupted;
      if (values.prompt !== undefined) return turn(values.prompt, signal);
      const tty = process.stdin.isTTY === true;
      const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: tty });
      let code: number = EXIT.ok;
      // The line iterator buffers what arrives while a turn runs (piped prompts are not lost).
      if (tty) rl.prompt();
      try {
        for await (const line of rl) {
          if (line.trim() !== "") code = await turn(line, signal);
          if (tty) rl.prompt();
        }
      } finally {
        rl.close();
      }
      return code;
    },
  );
}

/**
 * The hub seen through a catalog mode, as the agent's tool host; its engines load only here.
 * What a policy denies this machine's user whatever the arguments (`hidden`) is in no search
 * result, description or code-mode declaration the model reads.
 */
async function modeToolHost(
  hub: Hub,
  hidden: (tool: CatalogTool, profile: string | undefined) => boolean,
  settings: { mode: CatalogMode; pin: readonly string[] },
  codeLimits: NonNullable<McplexConfig["serve"]>["code"],
) {
  const [{ CatalogView }, { viewEngines }, { viewToolHost }] = await Promise.all([
    import("../../catalog-modes/catalog-view.js"),
    import("../../catalog-modes/view-engines.js"),
    import("../../catalog-modes/view-tool-host.js"),
  ]);
  const engines = viewEngines(codeLimits === undefined ? {} : { codeLimits });
  const allowed = {
    tools: (profile?: string) => hub.tools(profile).filter((tool) => !hidden(tool, profile)),
    callTool: hub.callTool.bind(hub),
    skills: hub.skills.bind(hub),
    loadSkill: hub.loadSkill.bind(hub),
    readSkillFile: hub.readSkillFile.bind(hub),
  };
  return viewToolHost(allowed, new CatalogView(settings, engines));
}

/** Prints an agent event; what the model, a server or an error says is shown, never obeyed by the terminal. */
function printEvent(event: AgentEvent): void {
  switch (event.type) {
    case "text-delta":
      process.stdout.write(terminalText(event.text));
      return;
    case "tool-call":
      process.stderr.write(terminalText(`\n[tool] ${event.toolName} ${event.rawArguments}\n`));
      return;
    case "tool-result":
      process.stderr.write(
        terminalText(
          `[tool] ${event.toolName} ${event.isError ? "failed" : "ok"}: ${firstLine(event.output)}\n`,
        ),
      );
      return;
    case "notice":
      process.stderr.write(terminalText(`[note] ${event.message}\n`));
      return;
    case "retry":
      process.stderr.write(
        terminalText(`[retry] attempt ${event.attempt} in ${event.delayMs} ms: ${event.error.message}\n`),
      );
      return;
    case "error":
      process.stderr.write(terminalText(`[error] ${event.error.message}\n`));
      if (event.error instanceof McplexError && event.error.hint !== undefined)
        process.stderr.write(terminalText(`  hint: ${event.error.hint}\n`));
      return;
    case "done":
      process.stdout.write("\n");
      return;
    default:
      return;
  }
}

function firstLine(text: string): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > 120 ? `${line.slice(0, 117)}...` : line;
}

/** Errors serialise to their message and code instead of `{}`. */
function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) {
    return { name: value.name, message: value.message, ...("code" in value ? { code: value.code } : {}) };
  }
  return value;
}
