import { RegistryError } from "../errors.js";
import { printable } from "./registry-text.js";
import type { RegistryArgument } from "./server-json.js";

/**
 * What `mcplex add` refuses to write from a registry's `server.json`: each check returns why a
 * value is refused, or `undefined`. A registry chooses which package, image or URL a name
 * means; these keep it from choosing anything else (how the runner loads code, where it
 * fetches from, what a loader reads from the environment).
 */

/**
 * The refusal of one field of one server: which field (its path in `server.json`), the value
 * as it may be printed, and why. Nothing is written when it is thrown.
 */
export function refused(server: string, path: string, value: string, why: string): RegistryError {
  const shown = printable(value);
  return new RegistryError(
    "REGISTRY_ENTRY_REFUSED",
    `${printable(server)}: ${path} ${JSON.stringify(shown.length > 120 ? `${shown.slice(0, 120)}…` : shown)} is refused: ${why}`,
    {
      path,
      hint: "nothing was written; ask the server's publisher to fix its server.json, or write the entry by hand after reading it",
    },
  );
}

/** An environment variable name as a shell spells one. */
const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;

/** Variables that change how a runtime, a loader or a package manager loads code (any case). */
const LOADER_ENV_PREFIXES = [
  "LD_",
  "DYLD_",
  "PYTHON",
  "NPM_CONFIG_",
  "YARN_",
  "PNPM_",
  "COREPACK_",
  "BUN_",
  "DENO_",
  "UV_",
  "PIP_",
  "PIPX_",
  "CONDA_",
  "GIT_",
  "DOCKER_",
  "PODMAN_",
  "CONTAINERS_",
  "OPENSSL_",
  "MCPLEX_",
  "GCONV_",
  "MALLOC_",
  "GLIBC_",
];
const LOADER_ENV_NAMES = new Set([
  "PATH",
  "HOME",
  "ENV",
  "BASH_ENV",
  "SHELLOPTS",
  "BASHOPTS",
  "PS4",
  "IFS",
  "CDPATH",
  "PROMPT_COMMAND",
  "JAVA_TOOL_OPTIONS",
  "_JAVA_OPTIONS",
  "JDK_JAVA_OPTIONS",
  "CLASSPATH",
  "RUBYOPT",
  "RUBYLIB",
  "GEM_HOME",
  "GEM_PATH",
  "BUNDLE_GEMFILE",
  "PERL5OPT",
  "PERL5LIB",
  "PERLLIB",
  "VIRTUAL_ENV",
  "XDG_CONFIG_HOME",
  "XDG_DATA_HOME",
  "XDG_CACHE_HOME",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "REQUESTS_CA_BUNDLE",
  "CURL_CA_BUNDLE",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "ALL_PROXY",
  "NO_PROXY",
  "CONTAINER_HOST",
  "HOSTALIASES",
  "LOCALDOMAIN",
  "RES_OPTIONS",
  "NLSPATH",
  "LOCPATH",
  "TMPDIR",
]);

/**
 * Why an environment variable's name is refused: not spelled `^[A-Z_][A-Z0-9_]*$`, or one that
 * changes how a runtime loads code (`NODE_OPTIONS`, `LD_PRELOAD`, `npm_config_registry`,
 * `PYTHONPATH`, `PATH`...). `NODE_ENV` is the one `NODE_` name let through.
 */
export function envNameProblem(name: string): string | undefined {
  const upper = name.toUpperCase();
  const loader =
    LOADER_ENV_NAMES.has(upper) ||
    LOADER_ENV_PREFIXES.some((prefix) => upper.startsWith(prefix)) ||
    (upper.startsWith("NODE_") && upper !== "NODE_ENV");
  if (loader) return "it changes how the runtime or its package manager loads code";
  if (!ENV_NAME.test(name))
    return "an environment variable's name is A-Z, 0-9 and _, not starting with a digit";
  return undefined;
}

/**
 * Flags that reconfigure npx, npm, uvx, pip, pipx or node (where packages come from, which
 * config files are read, what is preloaded, what is run instead); refused anywhere in a
 * package's arguments, since a runner may read its flags after the package too.
 */
const RUNNER_FLAGS = new Set([
  "--registry",
  "--userconfig",
  "--globalconfig",
  "--prefix",
  "--cache",
  "--node-options",
  "--package",
  "-p",
  "--call",
  "-c",
  "--script-shell",
  "--workspace",
  "-w",
  "--global",
  "-g",
  "--location",
  "--before",
  "--index-url",
  "-i",
  "--extra-index-url",
  "--index",
  "--default-index",
  "--find-links",
  "-f",
  "--from",
  "--with",
  "--with-editable",
  "--with-requirements",
  "--python",
  "--config-file",
  "--directory",
  "--project",
  "--cache-dir",
  "--keyring-provider",
  "--allow-insecure-host",
  "--trusted-host",
  "--pip-args",
  "--spec",
  "--require",
  "-r",
  "--import",
  "--loader",
  "--experimental-loader",
  "--eval",
  "--env-file",
]);

/** The flag part of an argument: `--registry` of `--registry=URL`. */
function flagOf(arg: string): string {
  const at = arg.indexOf("=");
  return at < 0 ? arg : arg.slice(0, at);
}

/**
 * Why a package argument is refused: a flag that reconfigures the runner (`--registry=`,
 * `--index-url`, `--userconfig`, `--node-options`...), including npm's per-scope and
 * per-registry settings (`--@scope:registry=`, `--//host/:_authToken=`).
 */
export function runnerArgumentProblem(arg: string): string | undefined {
  const flag = flagOf(arg);
  if (RUNNER_FLAGS.has(flag) || flag.startsWith("--@") || flag.startsWith("--//") || flag.startsWith("--_"))
    return "it reconfigures the program that fetches and runs the package";
  return undefined;
}

/** `docker run` / `podman run` flags that widen what the container may reach or change what runs. */
const CONTAINER_FLAGS = new Set([
  "--privileged",
  "--cap-add",
  "--security-opt",
  "--device",
  "--device-cgroup-rule",
  "--pid",
  "--ipc",
  "--network",
  "--net",
  "--userns",
  "--uts",
  "--cgroupns",
  "--cgroup-parent",
  "--volumes-from",
  "--entrypoint",
  "-e",
  "--env",
  "--env-file",
  "--runtime",
  "--isolation",
  "--group-add",
  "--user",
  "-u",
]);

/**
 * Why a container runtime argument is refused: a flag that widens the container's reach
 * (`--privileged`, `--cap-add`, `--network`...) or sets its environment or entry point around
 * the checks of the entry's own variables.
 */
export function containerArgumentProblem(arg: string): string | undefined {
  if (CONTAINER_FLAGS.has(flagOf(arg)))
    return "it widens what the container may reach or changes what it runs";
  return undefined;
}

// The rule of every URL mcplex sends to (a remote server, a registry, a guardrail service).
export { remoteUrlProblem } from "../config/remote-url.js";

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers that frame or route the request rather than carry a value for the server. */
const FRAMING_HEADERS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "upgrade",
  "te",
  "trailer",
  "keep-alive",
  "proxy-authorization",
  "proxy-connection",
  "cookie",
  "mcp-session-id",
  "mcp-protocol-version",
]);

/** Why a remote's header name is refused: not a header name, or one the transport sets itself. */
export function headerNameProblem(name: string): string | undefined {
  if (!HEADER_NAME.test(name)) return "it is not an HTTP header name";
  if (FRAMING_HEADERS.has(name.toLowerCase())) return "the transport sets this header itself";
  return undefined;
}

/** An exact semantic version (semver.org's own pattern): `1.2.3`, `1.2.3-rc.1+build`. */
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;
/** An exact PEP 440 version: `1.4.0`, `2.0rc1`, `1.0.post2`, `1!2.0` (no operator, no `*`). */
const PEP440 =
  /^(?:\d+!)?\d+(?:\.\d+)*(?:[-_.]?(?:a|b|rc|alpha|beta|c|pre|preview)[-_.]?\d*)?(?:[-_.]?(?:post|rev|r)[-_.]?\d*)?(?:[-_.]?dev[-_.]?\d*)?(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?$/i;
/** An OCI tag. */
const OCI_TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

/**
 * Why a package's version is refused: none, or not one exact version (`latest`, `^1.0.0`,
 * `>=0.0.0 || *`, `1.x`), so that what runs is what was chosen and a new release is never
 * picked up silently. For an image a tag or a digest is needed, and the tag is not `latest`.
 */
export function versionProblem(
  registryType: string | undefined,
  version: string | undefined,
): string | undefined {
  if (version === undefined || version === "")
    return "the package has no version: it would run whatever is newest";
  if (registryType === "npm" && !SEMVER.test(version))
    return "not one exact version (a tag, a range or a wildcard would run whatever matches when it starts)";
  if (registryType === "pypi" && !PEP440.test(version))
    return "not one exact version (a range or a wildcard would run whatever matches when it starts)";
  if (registryType === "oci" && (!OCI_TAG.test(version) || version === "latest"))
    return "an image needs a tag other than latest, or a digest";
  return undefined;
}

/** npm package names (scoped or not; older packages may have capitals). */
const NPM_NAME = /^(?:@[A-Za-z0-9~][A-Za-z0-9._~-]*\/)?[A-Za-z0-9~][A-Za-z0-9._~-]*$/;
/** PyPI project names (PEP 508). */
const PYPI_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;
/** An OCI image reference: `[host[:port]/]path[:tag][@digest]`. */
const OCI_REFERENCE =
  /^[A-Za-z0-9][A-Za-z0-9.-]*(?::\d+)?(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@[a-z0-9]+(?:[+._-][a-z0-9]+)*:[A-Za-z0-9=_-]+)?$/;

/**
 * Why a package's identifier is refused: not a package name of its registry (so not a version,
 * a path, a URL or a flag: `left-pad@latest`, `file:../x`, `--registry=...`).
 */
export function identifierProblem(registryType: string | undefined, identifier: string): string | undefined {
  const pattern = registryType === "npm" ? NPM_NAME : registryType === "pypi" ? PYPI_NAME : OCI_REFERENCE;
  if (!pattern.test(identifier))
    return `it is not ${registryType === "oci" ? "an image reference" : `a ${registryType} package name`} (a version, path, URL or flag goes nowhere else)`;
  return undefined;
}

/**
 * Why a container's mount is refused: a host directory the registry fixed (`-v /:/host`,
 * `--mount type=bind,src=/`), or one a default fills in. The host path a container sees is the
 * user's to give (`src={dump_dir}`, asked for); a named volume is the container runtime's.
 */
export function bindSourceProblem(arg: RegistryArgument): string | undefined {
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
