import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, delimiter, dirname, join, resolve } from "node:path";
import { McplexError } from "../errors.js";

/** What a sandboxed server runs, and the host paths it needs to see (read-only) to run it. */
export interface ServerPackage {
  command: string;
  args: string[];
  /**
   * Host paths bound read-only at the same path: the server's package and its dependencies'
   * directories, or only its own files where a directory would show the hidden folder.
   */
  paths: string[];
}

/** Directories bwrap binds anyway: a program found there needs nothing more. */
const SYSTEM_DIRS = ["/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/"];

const NODE_COMMANDS = new Set(["node", "nodejs"]);
const NPX_COMMANDS = new Set(["npx", "npm"]);

function onPath(command: string, env: Record<string, string | undefined>, cwd: string): string | undefined {
  if (command.includes("/")) return existsSync(resolve(cwd, command)) ? resolve(cwd, command) : undefined;
  // A bare name is looked up on PATH, as the shell would.
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    const candidate = join(dir, command);
    if (dir !== "" && existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** The directory a program lives in, when it is outside the system's (a Node in ~/.nvm: its prefix). */
export function programDirs(path: string): string[] {
  const real = realpathSync(path);
  if (SYSTEM_DIRS.some((dir) => real.startsWith(dir))) return [];
  const dir = dirname(real);
  return [basename(dir) === "bin" ? dirname(dir) : dir];
}

/** Whether `dir` is `folder` or holds it. */
function holds(dir: string, folder: string): boolean {
  return folder === dir || folder.startsWith(dir === "/" ? "/" : `${dir}/`);
}

/**
 * The directories to bind, each replaced by the given files under it where it is or holds
 * `hidden` (the config's folder: mcplex.yaml, its lock file, .env, audit.log), so that a server
 * run from beside its config sees its own file and not its neighbours.
 */
function sparing(dirs: string[], files: string[], hidden: string | undefined): string[] {
  if (hidden === undefined) return dirs;
  return dirs.flatMap((dir) =>
    holds(dir, hidden) ? files.filter((file) => file.startsWith(dir === "/" ? "/" : `${dir}/`)) : [dir],
  );
}

/** The nearest `node_modules` at or above `dir`, where a script's dependencies are found. */
function nearestNodeModules(dir: string): string | undefined {
  for (let at = dir; ; at = dirname(at)) {
    const candidate = join(at, "node_modules");
    if (existsSync(candidate)) return realpathSync(candidate);
    if (dirname(at) === at) return undefined;
  }
}

function packageName(spec: string): string {
  const at = spec.indexOf("@", 1);
  return at === -1 ? spec : spec.slice(0, at);
}

/** The package's installed directory: in a `node_modules` above `cwd` (as npx looks first), else npx's cache. */
function findInstalled(name: string, cwd: string): string | undefined {
  for (let at = cwd; ; at = dirname(at)) {
    const candidate = join(at, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    if (dirname(at) === at) break;
  }
  const cache = join(process.env.npm_config_cache ?? join(homedir(), ".npm"), "_npx");
  if (!existsSync(cache)) return undefined;
  const found = readdirSync(cache)
    .map((entry) => join(cache, entry, "node_modules", name))
    .filter((dir) => existsSync(join(dir, "package.json")))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  return found[0];
}

function binOf(dir: string, name: string): string | undefined {
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
    bin?: string | Record<string, string>;
  };
  if (typeof manifest.bin === "string") return join(dir, manifest.bin);
  const bins = Object.values(manifest.bin ?? {});
  const own = manifest.bin?.[name.split("/").pop() ?? name];
  const bin = own ?? (bins.length === 1 ? bins[0] : undefined);
  return bin === undefined ? undefined : join(dir, bin);
}

/**
 * Resolves a server's launch to what the sandbox runs. `npx -y pkg@1.2 args` runs the package's
 * installed bin directly (npx itself would want the network and a writable cache), binding the
 * `node_modules` it is installed in; `node script.js` binds the script's directory and its nearest
 * `node_modules`; any other program binds its own directory when it is outside the system's.
 * A directory that is or holds `hidden` is not bound: only the program, the script and the
 * script's `package.json` in it are.
 */
export function serverPackage(
  command: string,
  args: readonly string[],
  cwd: string,
  env: Record<string, string | undefined>,
  options: { server?: string; hidden?: string } = {},
): ServerPackage {
  const { server, hidden } = options;
  const name = basename(command);
  const fail = (message: string) =>
    new McplexError("UPSTREAM_START_FAILED", `${server === undefined ? "" : `${server}: `}${message}`, {
      ...(server === undefined ? {} : { server }),
      transport: "stdio",
    });
  if (NPX_COMMANDS.has(name)) {
    const rest = name === "npm" && args[0] === "exec" ? args.slice(1) : [...args];
    const at = rest.findIndex((arg) => !arg.startsWith("-"));
    const spec = rest[at];
    if (spec === undefined)
      throw fail(`"${command}" is given no package to run, so there is nothing to sandbox`);
    const pkg = packageName(spec);
    const dir = findInstalled(pkg, cwd);
    const bin = dir === undefined ? undefined : binOf(dir, pkg);
    if (dir === undefined || bin === undefined) {
      throw fail(
        `the sandbox runs ${pkg} from where it is installed, and it is not: run \`npx -y ${spec} --help\` ` +
          `once (or \`npm install ${spec}\`) outside the sandbox, then start again`,
      );
    }
    const modules = nearestNodeModules(dirname(realpathSync(dir))) ?? realpathSync(dir);
    const nodeProgram = onPath("node", env, cwd);
    const dirs = [modules, realpathSync(dir), ...(nodeProgram === undefined ? [] : programDirs(nodeProgram))];
    const files = [realpathSync(bin), ...(nodeProgram === undefined ? [] : [realpathSync(nodeProgram)])];
    return {
      command: realpathSync(bin),
      args: rest.slice(at + 1).filter((arg, i) => !(i === 0 && arg === "--")),
      paths: sparing(dirs, files, hidden),
    };
  }
  const program = onPath(command, env, cwd);
  if (program === undefined) throw fail(`command "${command}" was not found; check the command and PATH`);
  const dirs = programDirs(program);
  const files = [realpathSync(program)];
  const launch = [...args];
  // The working directory may be out of sight inside, so a relative script becomes absolute.
  const evaluates = args.some((arg) => ["-e", "--eval", "-p", "--print"].includes(arg));
  const at = NODE_COMMANDS.has(name) && !evaluates ? args.findIndex((arg) => !arg.startsWith("-")) : -1;
  const script = args[at] === undefined ? undefined : resolve(cwd, args[at]);
  if (script !== undefined && existsSync(script)) {
    const path = realpathSync(script);
    launch[at] = path;
    dirs.push(dirname(path));
    files.push(path);
    // Node reads it for the script's module type.
    if (existsSync(join(dirname(path), "package.json"))) files.push(join(dirname(path), "package.json"));
    const modules = nearestNodeModules(dirname(path));
    if (modules !== undefined) dirs.push(modules);
  }
  return { command: program, args: launch, paths: sparing(dirs, files, hidden) };
}
