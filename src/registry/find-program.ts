import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/**
 * Whether `name` is an executable on `PATH` (with `PATHEXT` on Windows), the way a shell would
 * find it: what `mcplex add` checks before writing a command this machine cannot run.
 */
export function hasProgram(
  name: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): boolean {
  const extensions = process.platform === "win32" ? (env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";") : [""];
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    for (const ext of extensions) {
      try {
        accessSync(join(dir, name + ext), constants.X_OK);
        return true;
      } catch {
        // Not in this directory.
      }
    }
  }
  return false;
}
