import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { serveWorkspaceStdio } from "../../workspace/stdio.js";
import { EXIT } from "../output.js";

/** `mcplex workspace --root DIR [--allow-write]`: the built-in workspace server on stdio. */
export async function workspaceCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { root: { type: "string", short: "r" }, "allow-write": { type: "boolean" } },
  });
  const root = resolve(values.root ?? process.cwd());
  const handle = serveWorkspaceStdio({
    root,
    allowWrite: values["allow-write"] === true,
    onerror: (error) => console.error(`mcplex workspace: ${error.message}`),
  });
  await new Promise<void>((done) => {
    const stop = () => void Promise.resolve(handle.close()).finally(done);
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    process.stdin.once("end", stop);
  });
  return EXIT.ok;
}
