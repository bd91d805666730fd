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
import {
  argText,
  argumentParts,
  checker,
  type EntryInput,
  entryValue,
  type InputText,
  unique,
} from "./entry-value.js";
import { configLiteral } from "./registry-text.js";
import type { RegistryPackage, RegistryTransport, ServerJson } from "./server-json.js";

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
  // An image reference with its tag or digest in it (`img:1.2`, `img@sha256:...`).
  const pinned = pkg.registryType === "oci" && /(?:@[^/]*:|:[^/]*$)/.test(identifier);
  if (pinned) {
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
