/**
 * The parts of the MCP Registry's `server.json` (schema 2025-12-11) and of its `/v0.1/servers`
 * answer that `mcplex search` and `mcplex add` read. Everything is optional on purpose: the
 * documents come from the network, and a field a publisher left out must not become a crash.
 */

/** A value the user supplies: an environment variable, a header, a URL or argument variable. */
export interface RegistryInput {
  name?: string;
  description?: string;
  isRequired?: boolean;
  isSecret?: boolean;
  default?: string;
  value?: string;
  choices?: string[];
  format?: string;
  /** The `{name}` placeholders of `value`, each a value the user supplies. */
  variables?: Record<string, RegistryInput>;
}

/** A command-line argument of a package or of its runtime (`docker run` flags). */
export interface RegistryArgument extends RegistryInput {
  type?: "positional" | "named";
  valueHint?: string;
  isRepeated?: boolean;
}

/** How a package or a remote is reached. */
export interface RegistryTransport {
  type?: string;
  url?: string;
  headers?: RegistryInput[];
  variables?: Record<string, RegistryInput>;
}

/** One way to install the server: an npm, PyPI, OCI (container), NuGet or MCPB package. */
export interface RegistryPackage {
  registryType?: string;
  registryBaseUrl?: string;
  identifier?: string;
  version?: string;
  runtimeHint?: string;
  transport?: RegistryTransport;
  runtimeArguments?: RegistryArgument[];
  packageArguments?: RegistryArgument[];
  environmentVariables?: RegistryInput[];
}

/** A `server.json` document. */
export interface ServerJson {
  name: string;
  title?: string;
  description?: string;
  version?: string;
  repository?: { url?: string; source?: string };
  websiteUrl?: string;
  packages?: RegistryPackage[];
  remotes?: RegistryTransport[];
}

/** One item of a `/v0.1/servers` page: the document and the registry's own record of it. */
export interface RegistryServerItem {
  server: ServerJson;
  _meta?: Record<string, unknown>;
}

/** A `/v0.1/servers` page. */
export interface RegistryServerPage {
  servers: RegistryServerItem[];
  metadata?: { nextCursor?: string; count?: number };
}
