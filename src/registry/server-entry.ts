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
  /**
   * What the value is: an environment variable, a remote's header, a URL variable, an argument,
   * or a `{variable}` inside an environment variable's or a header's fixed value.
   */
  kind: "env" | "header" | "url-variable" | "argument" | "variable";
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

/** The public package registries, which npx and uvx use when told nothing. */
const PUBLIC = { npm: /^https:\/\/registry\.npmjs\.org\/?$/, pypi: /^https:\/\/pypi\.org(\/simple)?\/?$/ };

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
  const env = (pkg.environmentVariables ?? []).flatMap((v) =>
    v.name ? [[v.name, entryValue("env", v.name, v)] as const] : [],
  );
  const args = argumentParts(pkg.packageArguments ?? []);
  const runtimeArgs = argumentParts(pkg.runtimeArguments ?? []);
  const inputs = unique([...env.flatMap(([, v]) => v.inputs), ...runtimeArgs.inputs, ...args.inputs]);
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
      const vars: Record<string, string> = {};
      for (const [name, value] of env) {
        const text = value.text(textOf);
        if (text !== undefined) vars[name] = text;
      }
      const tail = args.build(textOf);
      let argv: string[];
      // A package published on another registry than the public one is fetched from there.
      const base = pkg.registryBaseUrl;
      if (pkg.registryType === "npm")
        argv = ["-y", ...(base && !PUBLIC.npm.test(base) ? [`--registry=${base}`] : []), target, ...tail];
      else if (pkg.registryType === "pypi")
        argv = [...(base && !PUBLIC.pypi.test(base) ? ["--index-url", base] : []), target, ...tail];
      else {
        // The container sees only the variables named with -e; their values come from mcplex's env.
        const passEnv = Object.keys(vars).flatMap((name) => ["-e", name]);
        argv = ["run", "--rm", "-i", ...runtimeArgs.build(textOf), ...passEnv, target, ...tail];
      }
      return { command: runtime, args: argv, ...(Object.keys(vars).length > 0 ? { env: vars } : {}) };
    },
  };
}

function remotePlan(server: ServerJson, remote: RegistryTransport): EntryPlan {
  const url = entryValue("url-variable", "url", {
    value: remote.url!,
    isRequired: true,
    ...(remote.variables ? { variables: remote.variables } : {}),
  });
  const headers = (remote.headers ?? []).flatMap((h) =>
    h.name ? [[h.name, entryValue("header", h.name, h)] as const] : [],
  );
  return {
    source: `remote ${remote.url}`,
    ...(server.version === undefined ? {} : { version: server.version }),
    stdio: false,
    inputs: unique([...url.inputs, ...headers.flatMap(([, h]) => h.inputs)]),
    build(textOf) {
      const out: Record<string, string> = {};
      for (const [name, value] of headers) {
        const text = value.text(textOf);
        if (text !== undefined) out[name] = text;
      }
      return {
        url: url.text(textOf) ?? remote.url!,
        ...(remote.type === "sse" ? { transport: "sse" } : {}),
        ...(Object.keys(out).length > 0 ? { headers: out } : {}),
      };
    },
  };
}

/** A value of the entry and the inputs it is made of. */
interface EntryValue {
  inputs: EntryInput[];
  /** The text, or `undefined` when an input it needs has none. */
  text(textOf: (input: EntryInput) => string | undefined): string | undefined;
}

/**
 * A value as `server.json` gives it: fixed (`value`), a template whose `{name}` placeholders
 * are its `variables` (each an input; a secret one becomes a `${secret:...}` inside the text),
 * or, without `value`, an input itself.
 */
function entryValue(kind: EntryInput["kind"], name: string, from: RegistryInput): EntryValue {
  if (from.value === undefined) {
    const input = toInput(kind, name, from);
    return { inputs: [input], text: (textOf) => textOf(input) };
  }
  const template = from.value;
  const inputs = Object.entries(from.variables ?? {})
    .filter(([variable]) => template.includes(`{${variable}}`))
    .map(([variable, def]) =>
      toInput(kind === "header" || kind === "env" ? "variable" : kind, variable, def),
    );
  return {
    inputs,
    text(textOf) {
      let text = template;
      for (const input of inputs) {
        const part = textOf(input);
        if (part === undefined) return undefined;
        text = text.replaceAll(`{${input.name}}`, part);
      }
      return text;
    },
  };
}

/** Arguments as argv parts; a required one without a value becomes an input. */
function argumentParts(list: RegistryArgument[]): {
  inputs: EntryInput[];
  build: (textOf: (input: EntryInput) => string | undefined) => string[];
} {
  const parts: Array<{ flag?: string; value?: EntryValue }> = [];
  for (const [index, arg] of list.entries()) {
    const named = arg.type === "named";
    if (named && !arg.name) continue;
    const fixed = arg.value ?? arg.default;
    const value =
      fixed !== undefined
        ? entryValue("argument", arg.name ?? `arg${index + 1}`, { ...arg, value: fixed })
        : arg.isRequired
          ? entryValue("argument", named ? arg.name! : (arg.valueHint ?? `arg${index + 1}`), {
              ...arg,
              isRequired: true,
            })
          : undefined;
    // A named flag without a value is a switch (`--verbose`); an optional one left out is omitted.
    if (named && (value !== undefined || (arg.isRequired !== true && arg.valueHint === undefined)))
      parts.push({ flag: arg.name!, ...(value === undefined ? {} : { value }) });
    else if (!named && value !== undefined) parts.push({ value });
  }
  return {
    inputs: parts.flatMap((part) => part.value?.inputs ?? []),
    build: (textOf) =>
      parts.flatMap((part) => {
        const text = part.value?.text(textOf);
        if (part.value !== undefined && text === undefined) return [];
        return [...(part.flag === undefined ? [] : [part.flag]), ...(text === undefined ? [] : [text])];
      }),
  };
}

/** One input per name: a variable two values use is asked for once. */
function unique(inputs: EntryInput[]): EntryInput[] {
  const seen = new Map<string, EntryInput>();
  for (const input of inputs) if (!seen.has(input.name)) seen.set(input.name, input);
  return [...seen.values()];
}

function toInput(kind: EntryInput["kind"], name: string, from: RegistryInput): EntryInput {
  return {
    kind,
    name,
    ...(from.description === undefined ? {} : { description: from.description }),
    required: from.isRequired === true,
    secret: from.isSecret === true,
    ...(from.default === undefined ? {} : { default: from.default }),
    ...(from.choices === undefined ? {} : { choices: from.choices }),
  };
}
