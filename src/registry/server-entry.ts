import { RegistryError } from "../errors.js";
import type {
  RegistryArgument,
  RegistryInput,
  RegistryPackage,
  RegistryTransport,
  ServerJson,
} from "./server-json.js";

/** A value `mcplex add` needs from the user before it can write the entry. */
export interface EntryInput {
  /** What the value is: an environment variable, a remote's header, a URL variable, an argument. */
  kind: "env" | "header" | "url-variable" | "argument";
  /** Its name: the variable's, the header's, the URL variable's, or an argument's value hint. */
  name: string;
  description?: string;
  required: boolean;
  /** Kept in the secret store and written as `${secret:...}`, never in the config. */
  secret: boolean;
  default?: string;
  choices?: string[];
}

/** The programs each package type runs with, in the order they are tried. */
const RUNTIMES: Record<string, string[]> = {
  npm: ["npx"],
  pypi: ["uvx"],
  oci: ["docker", "podman"],
};

/** What to install when a runtime is missing. */
const INSTALL_HINTS: Record<string, string> = {
  npm: "install Node.js with npm (it brings npx)",
  pypi: "install uv (https://docs.astral.sh/uv/), which brings uvx",
  oci: "install Docker or Podman",
};

/** How a server from the registry will run here, and what it still needs from the user. */
export interface EntryPlan {
  /** What was chosen, for the user: `npm @scope/pkg@1.2.3`, `remote https://...`. */
  source: string;
  /** Pinned version (the package's, else the server's); absent for remotes without one. */
  version?: string;
  /** True for a stdio server (what a sandbox applies to). */
  stdio: boolean;
  inputs: EntryInput[];
  /**
   * The config entry, with each input's text from `textOf` (the value, or a `${secret:...}`
   * reference); an input `textOf` leaves out is left out of the entry.
   */
  build(textOf: (input: EntryInput) => string | undefined): Record<string, unknown>;
}

/** Options of {@link planEntry}. */
export interface PlanOptions {
  /** Whether a program is on this machine's PATH. */
  hasProgram: (name: string) => boolean;
}

/**
 * Chooses how to run a registry server here: the first package this machine can run (npm, then
 * PyPI, then OCI), else its first remote. A server with packages none of which can run here, and
 * no remote, is RUNTIME_MISSING naming what to install.
 */
export function planEntry(server: ServerJson, options: PlanOptions): EntryPlan {
  const packages = (server.packages ?? []).filter(
    (pkg) => pkg.transport?.type === undefined || pkg.transport.type === "stdio",
  );
  for (const pkg of packages) {
    const runtime = (RUNTIMES[pkg.registryType ?? ""] ?? []).find(options.hasProgram);
    if (runtime !== undefined && pkg.identifier) return packagePlan(server, pkg, runtime);
  }
  const remote = (server.remotes ?? []).find((r) => typeof r.url === "string" && r.url !== "");
  if (remote !== undefined) return remotePlan(server, remote);
  const types = [...new Set((server.packages ?? []).map((pkg) => pkg.registryType ?? "unknown"))];
  if (types.length === 0)
    throw new RegistryError("RUNTIME_MISSING", `${server.name} lists no package and no remote to run`, {
      hint: "its publisher has to add one to its server.json; there is nothing mcplex can start",
    });
  const hints = types.map(
    (type) => INSTALL_HINTS[type] ?? `${type} packages are not supported by mcplex add`,
  );
  const local = (server.packages ?? []).some(
    (pkg) => pkg.transport?.type !== undefined && pkg.transport.type !== "stdio",
  );
  throw new RegistryError(
    "RUNTIME_MISSING",
    `${server.name} comes as ${types.join(", ")} package${types.length > 1 ? "s" : ""}, which this machine cannot run${local ? " (or only as a local HTTP server)" : ""}`,
    { hint: `${[...new Set(hints)].join("; ")}, then run mcplex add again` },
  );
}

function packagePlan(server: ServerJson, pkg: RegistryPackage, runtime: string): EntryPlan {
  const identifier = pkg.identifier!;
  const version = pkg.version ?? server.version;
  const envInputs = (pkg.environmentVariables ?? []).flatMap((v) =>
    v.name ? [toInput("env", v.name, v)] : [],
  );
  const args = argumentParts(pkg.packageArguments ?? []);
  const runtimeArgs = argumentParts(pkg.runtimeArguments ?? []);
  const inputs = [...envInputs, ...runtimeArgs.inputs, ...args.inputs];
  let target: string;
  switch (pkg.registryType) {
    case "npm":
      target = version ? `${identifier}@${version}` : identifier;
      break;
    case "pypi":
      target = version ? `${identifier}==${version}` : identifier;
      break;
    default:
      // OCI references carry their tag (schema 2025-12-11); older entries gave it as `version`.
      target = /[:@][^/]*$/.test(identifier) || !version ? identifier : `${identifier}:${version}`;
  }
  return {
    source: `${pkg.registryType} ${target}`,
    ...(version === undefined ? {} : { version }),
    stdio: true,
    inputs,
    build(textOf) {
      const env: Record<string, string> = {};
      for (const input of envInputs) {
        const value = textOf(input);
        if (value !== undefined) env[input.name] = value;
      }
      const tail = args.build(textOf);
      let argv: string[];
      if (pkg.registryType === "npm") argv = ["-y", target, ...tail];
      else if (pkg.registryType === "pypi") argv = [target, ...tail];
      else {
        // The container sees only the variables named with -e; their values come from mcplex's env.
        const passEnv = Object.keys(env).flatMap((name) => ["-e", name]);
        argv = ["run", "--rm", "-i", ...runtimeArgs.build(textOf), ...passEnv, target, ...tail];
      }
      return { command: runtime, args: argv, ...(Object.keys(env).length > 0 ? { env } : {}) };
    },
  };
}

function remotePlan(server: ServerJson, remote: RegistryTransport): EntryPlan {
  const variables = Object.entries(remote.variables ?? {}).map(([name, v]) =>
    toInput("url-variable", name, v),
  );
  const headers = (remote.headers ?? []).flatMap((h) =>
    h.name && h.value === undefined ? [toInput("header", h.name, h)] : [],
  );
  return {
    source: `remote ${remote.url}`,
    ...(server.version === undefined ? {} : { version: server.version }),
    stdio: false,
    inputs: [...variables, ...headers],
    build(textOf) {
      let url = remote.url!;
      for (const input of variables) url = url.replaceAll(`{${input.name}}`, textOf(input) ?? "");
      const out: Record<string, string> = {};
      for (const header of remote.headers ?? []) {
        if (!header.name) continue;
        const input = headers.find((h) => h.name === header.name);
        const value = input === undefined ? header.value : textOf(input);
        if (value !== undefined) out[header.name] = value;
      }
      return {
        url,
        ...(remote.type === "sse" ? { transport: "sse" } : {}),
        ...(Object.keys(out).length > 0 ? { headers: out } : {}),
      };
    },
  };
}

/** Arguments as argv parts; a required positional without a value becomes an input. */
function argumentParts(list: RegistryArgument[]): {
  inputs: EntryInput[];
  build: (textOf: (input: EntryInput) => string | undefined) => string[];
} {
  const inputs: EntryInput[] = [];
  const parts: Array<string | EntryInput> = [];
  for (const [index, arg] of list.entries()) {
    const value = arg.value ?? arg.default;
    if (arg.type === "named") {
      if (!arg.name) continue;
      if (value !== undefined) parts.push(arg.name, value);
      else if (arg.isRequired) {
        const input = toInput("argument", arg.name, arg);
        inputs.push(input);
        parts.push(arg.name, input);
      }
      continue;
    }
    if (value !== undefined) parts.push(value);
    else if (arg.isRequired) {
      const input = toInput("argument", arg.valueHint ?? `arg${index + 1}`, arg);
      inputs.push(input);
      parts.push(input);
    }
  }
  return {
    inputs,
    build: (textOf) => parts.flatMap((part) => (typeof part === "string" ? [part] : [textOf(part) ?? ""])),
  };
}

function toInput(kind: EntryInput["kind"], name: string, from: RegistryInput): EntryInput {
  return {
    kind,
    name,
    ...(from.description === undefined ? {} : { description: from.description }),
    required: from.isRequired === true || kind === "argument",
    secret: from.isSecret === true,
    ...(from.default === undefined ? {} : { default: from.default }),
    ...(from.choices === undefined ? {} : { choices: from.choices }),
  };
}
