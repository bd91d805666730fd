import { RegistryError } from "../errors.js";
import {
  containerArgumentProblem,
  envNameProblem,
  headerNameProblem,
  identifierProblem,
  refused,
  remoteUrlProblem,
  runnerArgumentProblem,
  versionProblem,
} from "./entry-rules.js";
import { configLiteral, hasControlCharacters, joinConfigText } from "./registry-text.js";
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

/**
 * What an input is given: a string is the user's own text, in config syntax (its `${...}`
 * expand, as in any entry the user writes); `{ literal }` is text written so that it loads
 * back as itself, for a registry's default.
 */
export type InputText = string | { literal: string };

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
   * reference); an input `textOf` leaves out is left out of the entry. Every text of the
   * registry's own is written literally (`$${`); an entry the rules refuse (a remote that is not
   * https:, an argument that reconfigures the runner) is REGISTRY_ENTRY_REFUSED.
   */
  build(textOf: (input: EntryInput) => InputText | undefined): Record<string, unknown>;
}

/** Options of {@link planEntry}. */
export interface PlanOptions {
  /** Whether a program is on this machine's PATH. */
  hasProgram: (name: string) => boolean;
}

/**
 * Chooses how to run a registry server here: the first package this machine can run (npm, then
 * PyPI, then OCI), else its first remote. A server with packages none of which can run here, and
 * no remote, is RUNTIME_MISSING naming what to install. What the registry says is data: a
 * version that is not exact, an environment variable or argument that changes how the runner
 * loads code, a remote that is not https: are REGISTRY_ENTRY_REFUSED, naming the field.
 */
export function planEntry(server: ServerJson, options: PlanOptions): EntryPlan {
  const packages = (server.packages ?? []).flatMap((pkg, index) =>
    pkg.transport?.type === undefined || pkg.transport.type === "stdio" ? [{ pkg, index }] : [],
  );
  for (const { pkg, index } of packages) {
    const runtime = (RUNTIMES[pkg.registryType ?? ""] ?? []).find(options.hasProgram);
    if (runtime !== undefined && pkg.identifier) return packagePlan(server, pkg, index, runtime);
  }
  const remotes = server.remotes ?? [];
  const at = remotes.findIndex((r) => typeof r.url === "string" && r.url !== "");
  if (at >= 0) return remotePlan(server, remotes[at]!, at);
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

function packagePlan(server: ServerJson, pkg: RegistryPackage, index: number, runtime: string): EntryPlan {
  const at = `packages[${index}]`;
  const check = checker(server.name);
  const identifier = check(`${at}.identifier`, pkg.identifier!, (id) =>
    identifierProblem(pkg.registryType, id),
  );
  const version = pkg.version ?? server.version;
  // The field the version came from; with neither, the package's, which is where it belongs.
  const versionPath = pkg.version === undefined && server.version !== undefined ? "version" : `${at}.version`;
  const pinned = /@[^/]*:/.test(identifier) || (pkg.registryType === "oci" && /:[^/]*$/.test(identifier));
  if (pkg.registryType === "oci" && pinned) {
    // The tag or digest is in the reference (schema 2025-12-11): a `latest` tag is no pin.
    if (/:latest$/.test(identifier))
      throw refused(
        server.name,
        `${at}.identifier`,
        identifier,
        "an image needs a tag other than latest, or a digest",
      );
  } else {
    const problem = versionProblem(pkg.registryType, version);
    if (problem !== undefined) throw refused(server.name, versionPath, version ?? "", problem);
  }
  const env = (pkg.environmentVariables ?? []).flatMap((v, i) => {
    if (!v.name) return [];
    const path = `${at}.environmentVariables[${i}]`;
    check(`${path}.name`, v.name, envNameProblem);
    return [[v.name, entryValue(server.name, path, "env", v.name, v)] as const];
  });
  if ((pkg.registryType === "npm" || pkg.registryType === "pypi") && (pkg.runtimeArguments ?? []).length > 0)
    throw refused(
      server.name,
      `${at}.runtimeArguments[0]`,
      argText(pkg.runtimeArguments![0]!),
      `arguments for ${runtime} before the package reconfigure it`,
    );
  const args = argumentParts(
    server.name,
    `${at}.packageArguments`,
    pkg.packageArguments ?? [],
    runnerArgumentProblem,
  );
  const runtimeArgs = argumentParts(
    server.name,
    `${at}.runtimeArguments`,
    pkg.runtimeArguments ?? [],
    containerArgumentProblem,
    true,
  );
  const inputs = unique([...env.flatMap(([, v]) => v.inputs), ...runtimeArgs.inputs, ...args.inputs]);
  // A package published on another registry than the public one is fetched from there.
  const base = pkg.registryBaseUrl;
  const privateBase =
    base !== undefined &&
    base !== "" &&
    ((pkg.registryType === "npm" && !PUBLIC.npm.test(base)) ||
      (pkg.registryType === "pypi" && !PUBLIC.pypi.test(base)))
      ? check(`${at}.registryBaseUrl`, base, remoteUrlProblem)
      : undefined;
  let target: string;
  switch (pkg.registryType) {
    case "npm":
      target = `${identifier}@${version}`;
      break;
    case "pypi":
      target = `${identifier}==${version}`;
      break;
    default:
      // OCI references carry their tag (schema 2025-12-11); older entries gave it as `version`.
      target = pinned ? identifier : `${identifier}:${version}`;
  }
  return {
    source: `${pkg.registryType} ${target}${privateBase === undefined ? "" : ` from ${privateBase}`}`,
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
      const written = configLiteral(target);
      let argv: string[];
      if (pkg.registryType === "npm")
        argv = ["-y", ...(privateBase ? [`--registry=${configLiteral(privateBase)}`] : []), written, ...tail];
      else if (pkg.registryType === "pypi")
        argv = [...(privateBase ? ["--index-url", configLiteral(privateBase)] : []), written, ...tail];
      else {
        // The container sees only the variables named with -e; their values come from mcplex's env.
        const passEnv = Object.keys(vars).flatMap((name) => ["-e", name]);
        argv = ["run", "--rm", "-i", ...runtimeArgs.build(textOf), ...passEnv, written, ...tail];
      }
      return { command: runtime, args: argv, ...(Object.keys(vars).length > 0 ? { env: vars } : {}) };
    },
  };
}

function remotePlan(server: ServerJson, remote: RegistryTransport, index: number): EntryPlan {
  const at = `remotes[${index}]`;
  const check = checker(server.name);
  // The URL as the registry fixed it (its `{variables}` standing for a host name part) must be
  // http(s) already; once filled in, https: (or http: to this machine).
  check(`${at}.url`, remote.url!, (url) => {
    const problem = remoteUrlProblem(url.replace(/\{[^{}]*\}/g, "x"));
    return problem !== undefined && !problem.startsWith("http:") ? problem : undefined;
  });
  const url = entryValue(server.name, at, "url-variable", "url", {
    value: remote.url!,
    isRequired: true,
    ...(remote.variables ? { variables: remote.variables } : {}),
  });
  const headers = (remote.headers ?? []).flatMap((h, i) => {
    if (!h.name) return [];
    const path = `${at}.headers[${i}]`;
    check(`${path}.name`, h.name, headerNameProblem);
    return [[h.name, entryValue(server.name, path, "header", h.name, h)] as const];
  });
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
      const written = url.text(textOf) ?? configLiteral(remote.url!);
      const problem = remoteUrlProblem(probeUrl(written));
      if (problem !== undefined) throw refused(server.name, `${at}.url`, probeUrl(written), problem);
      return {
        url: written,
        ...(remote.type === "sse" ? { transport: "sse" } : {}),
        ...(Object.keys(out).length > 0 ? { headers: out } : {}),
      };
    },
  };
}

/**
 * A URL as written, with its references standing for a host name part, so that what the
 * scheme and host will be can be checked before anything is expanded: `$${` is the literal
 * `${`, any other `${...}` (the user's own, a secret) becomes `x`.
 */
function probeUrl(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; ) {
    if (text.startsWith("$${", i)) {
      out += "${";
      i += 3;
    } else if (text.startsWith("${", i)) {
      let depth = 1;
      let j = i + 2;
      for (; j < text.length && depth > 0; j++) {
        if (text.startsWith("${", j)) {
          depth++;
          j++;
        } else if (text[j] === "}") depth--;
      }
      out += "x";
      i = j;
    } else out += text[i++];
  }
  return out;
}

/**
 * Why a container's mount is refused: a host directory the registry fixed (`-v /:/host`,
 * `--mount type=bind,src=/`), or one a default fills in. The host path a container sees is the
 * user's to give (`src={dump_dir}`, asked for); a named volume is the container runtime's.
 */
function bindSourceProblem(arg: RegistryArgument): string | undefined {
  const name = arg.name!;
  if (name.includes("=")) return "a container flag gives its value as the argument's value";
  const value = arg.value ?? arg.default;
  if (value === undefined || typeof value !== "string") return undefined;
  let source: string | undefined;
  if (name === "-v" || name === "--volume") {
    const host = value.split(":")[0] ?? "";
    source = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(host) ? undefined : host;
  } else if (name === "--mount") {
    const fields = new Map(
      value.split(",").map((field) => {
        const at = field.indexOf("=");
        return at < 0 ? [field, ""] : [field.slice(0, at), field.slice(at + 1)];
      }),
    );
    if ((fields.get("type") ?? "volume") === "bind") source = fields.get("src") ?? fields.get("source") ?? "";
  }
  if (source === undefined) return undefined;
  const variable = /^\{([^{}]+)\}$/.exec(source)?.[1];
  const input = variable === undefined ? undefined : arg.variables?.[variable];
  if (input === undefined)
    return "it mounts a host directory the registry chose; the host path must be asked for";
  if (input.default !== undefined || input.value !== undefined)
    return "it mounts a host directory the registry fills in";
  return undefined;
}

/** Argument text as a refusal shows it. */
function argText(arg: RegistryArgument): string {
  return [arg.name, arg.value ?? arg.default ?? arg.valueHint].filter((part) => part !== undefined).join(" ");
}

/**
 * A check of registry text: a value is refused when `problem` names one, or when it holds
 * control characters (a line break in a name, an escape sequence in a value).
 */
function checker(server: string) {
  return <T extends string>(path: string, value: T, problem: (value: T) => string | undefined): T => {
    if (typeof value !== "string")
      throw refused(server, path, JSON.stringify(value) ?? "", "it is not a string");
    if (hasControlCharacters(value)) throw refused(server, path, value, "it holds control characters");
    const why = problem(value);
    if (why !== undefined) throw refused(server, path, value, why);
    return value;
  };
}

/** A value of the entry and the inputs it is made of. */
interface EntryValue {
  inputs: EntryInput[];
  /** The text, in config syntax, or `undefined` when an input it needs has none. */
  text(textOf: (input: EntryInput) => InputText | undefined): string | undefined;
}

/** An input's text in config syntax: a literal one escaped, the user's as typed. */
function configText(text: InputText): string {
  return typeof text === "string" ? text : configLiteral(text.literal);
}

/**
 * A value as `server.json` gives it: fixed (`value`), a template whose `{name}` placeholders
 * are its `variables` (each an input; a secret one becomes a `${secret:...}` inside the text),
 * or, without `value`, an input itself. The template's own text is written literally; a
 * template that holds control characters is refused, and so is one whose `$` would meet the
 * `{` of a value put after it (that would make a reference of the two).
 */
function entryValue(
  server: string,
  path: string,
  kind: EntryInput["kind"],
  name: string,
  from: RegistryInput,
  valueField: "value" | "default" = "value",
): EntryValue {
  if (from.value === undefined) {
    const input = toInput(kind, name, from);
    return {
      inputs: [input],
      text(textOf) {
        const text = textOf(input);
        return text === undefined ? undefined : checkedText(server, path, configText(text));
      },
    };
  }
  const template = from.value;
  const valuePath = `${path}.${valueField}`;
  if (typeof template !== "string")
    throw refused(server, valuePath, JSON.stringify(template) ?? "", "it is not a string");
  if (hasControlCharacters(template))
    throw refused(server, valuePath, template, "it holds control characters");
  const inputs = Object.entries(from.variables ?? {})
    .filter(([variable]) => template.includes(`{${variable}}`))
    .map(([variable, def]) =>
      toInput(kind === "header" || kind === "env" ? "variable" : kind, variable, def),
    );
  const byName = new Map(inputs.map((input) => [input.name, input]));
  // `{name}` of a declared variable, else fixed text; one pass, so a value is never scanned again.
  const parts = template.split(/(\{[^{}]*\})/).filter((part) => part !== "");
  return {
    inputs,
    text(textOf) {
      const pieces: string[] = [];
      // Fixed text is escaped as one run: `${` may span a `{...}` that is no variable.
      let fixed = "";
      for (const part of parts) {
        const input = part.startsWith("{") ? byName.get(part.slice(1, -1)) : undefined;
        if (input === undefined) {
          fixed += part;
          continue;
        }
        const text = textOf(input);
        if (text === undefined) return undefined;
        pieces.push(configLiteral(fixed), configText(text));
        fixed = "";
      }
      pieces.push(configLiteral(fixed));
      const joined = joinConfigText(pieces);
      if (joined === undefined)
        throw refused(
          server,
          valuePath,
          template,
          `a "$" in it would meet the "{" of a value and make a "\${" reference`,
        );
      return checkedText(server, valuePath, joined);
    },
  };
}

/** The text of a value, refused when it holds control characters (a header split, a line forged). */
function checkedText(server: string, path: string, text: string): string {
  if (hasControlCharacters(text)) throw refused(server, path, text, "it holds control characters");
  return text;
}

/**
 * Arguments as argv parts; a required one without a value becomes an input. A flag or a value
 * `problem` names is refused (`--registry=...`), checked once the value is known; with
 * `namedOnly`, a positional argument is refused too (before an image, it would be taken for it).
 */
function argumentParts(
  server: string,
  path: string,
  list: RegistryArgument[],
  problem: (arg: string) => string | undefined,
  namedOnly = false,
): {
  inputs: EntryInput[];
  build: (textOf: (input: EntryInput) => InputText | undefined) => string[];
} {
  const check = checker(server);
  const parts: Array<{ flag?: string; value?: EntryValue; path: string }> = [];
  for (const [index, arg] of list.entries()) {
    const at = `${path}[${index}]`;
    const named = arg.type === "named";
    if (named && !arg.name) continue;
    if (!named && namedOnly)
      throw refused(server, at, argText(arg), "a positional argument before the image would be taken for it");
    if (named) check(`${at}.name`, arg.name!, problem);
    if (named && namedOnly) {
      const why = bindSourceProblem(arg);
      if (why !== undefined) throw refused(server, at, argText(arg), why);
    }
    const fixed = arg.value ?? arg.default;
    const value =
      fixed !== undefined
        ? entryValue(
            server,
            at,
            "argument",
            arg.name ?? `arg${index + 1}`,
            { ...arg, value: fixed },
            arg.value === undefined ? "default" : "value",
          )
        : arg.isRequired
          ? entryValue(server, at, "argument", named ? arg.name! : (arg.valueHint ?? `arg${index + 1}`), {
              ...arg,
              isRequired: true,
            })
          : undefined;
    // A named flag without a value is a switch (`--verbose`); an optional one left out is omitted.
    if (named && (value !== undefined || (arg.isRequired !== true && arg.valueHint === undefined)))
      parts.push({ flag: arg.name!, path: at, ...(value === undefined ? {} : { value }) });
    else if (!named && value !== undefined) parts.push({ value, path: at });
  }
  return {
    inputs: parts.flatMap((part) => part.value?.inputs ?? []),
    build: (textOf) =>
      parts.flatMap((part) => {
        const text = part.value?.text(textOf);
        if (part.value !== undefined && text === undefined) return [];
        if (text !== undefined) check(`${part.path}.value`, text, problem);
        return [
          ...(part.flag === undefined ? [] : [configLiteral(part.flag)]),
          ...(text === undefined ? [] : [text]),
        ];
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
    // The document comes from the network: a field of another type than the schema's is left out.
    ...(typeof from.description === "string" ? { description: from.description } : {}),
    required: from.isRequired === true,
    secret: from.isSecret === true,
    ...(typeof from.default === "string" ? { default: from.default } : {}),
    ...(Array.isArray(from.choices) ? { choices: from.choices.filter((c) => typeof c === "string") } : {}),
  };
}
