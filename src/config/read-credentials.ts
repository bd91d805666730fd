import { describeValue, joinPath } from "./config-issues.js";
import type {
  CredentialsConfig,
  IdJagCredentialsConfig,
  ServerConfig,
  TokenExchangeConfig,
  UsersConfig,
} from "./types.js";
import { hasUserPlaceholder } from "./user-placeholders.js";
import type { RawMap, ValueReader } from "./value-reader.js";

/** Users holding a connection (or process) of one per-user server at once, unless `maxUsers` says. */
export const DEFAULT_MAX_USERS = 16;
/** Defaults of the top-level `users:` block. */
export const USERS_DEFAULTS = { maxConnections: 64, maxPerUser: 8, idleTimeout: 600_000 } as const;

/**
 * Whether each signed-in user calls `server` with credentials of their own (`credentials:`
 * `per-user`, `{ exchange }` or `{ idJag }`): such a server has no shared connection, and callers without a
 * user are refused.
 */
export function isPerUser(server: ServerConfig): boolean {
  return server.credentials !== undefined && server.credentials !== "shared";
}

const EXCHANGE_KEYS = ["audience", "resource", "scopes", "issuer", "clientId", "clientSecret"];
const ID_JAG_KEYS = [
  "issuer",
  "clientId",
  "clientSecret",
  "scopes",
  "subjectTokenType",
  "serverClientId",
  "serverClientSecret",
];
const CREDENTIALS_CHOICES =
  'use "shared" (the default), "per-user", { exchange: { audience, clientId } } or { idJag: { clientId, serverClientId } }';

/**
 * `credentials:` and `maxUsers` of one server of transport `transport`: `shared` (the default,
 * nothing kept), `per-user`, `{ exchange: {...} }` or `{ idJag: {...} }` (remote servers only). The built-in and
 * in-process transports take only `shared`: they hold no credentials of their own.
 */
export function readCredentials(
  reader: ValueReader,
  node: RawMap,
  path: string,
  transport: ServerConfig["transport"] | undefined,
): { credentials?: CredentialsConfig; maxUsers?: number } {
  const credentialsPath = joinPath(path, "credentials");
  const credentials = readCredentialsValue(reader, node.credentials, credentialsPath);
  const maxUsers = reader.count(node.maxUsers, joinPath(path, "maxUsers"));
  const perUser = credentials !== undefined && credentials !== "shared";
  if (maxUsers !== undefined && !perUser)
    reader.fail(
      joinPath(path, "maxUsers"),
      'caps the users of a per-user server; add "credentials: per-user" or remove it',
    );
  if (perUser && transport !== undefined) {
    const remote = transport === "streamable-http" || transport === "sse" || transport === "websocket";
    if (transport !== "stdio" && !remote) {
      reader.fail(
        credentialsPath,
        `a ${transport} server runs in mcplex and holds no credentials of its own; only "shared" applies, so remove it`,
      );
      return {};
    }
    if (typeof credentials === "object" && !remote) {
      reader.fail(
        credentialsPath,
        'token exchange and ID-JAGs give a token to a remote (http, sse, websocket) server; a stdio server takes "per-user" (one process per user)',
      );
      return {};
    }
  }
  if (credentials === undefined || credentials === "shared") return {};
  return maxUsers === undefined ? { credentials } : { credentials, maxUsers };
}

function readCredentialsValue(
  reader: ValueReader,
  value: unknown,
  path: string,
): CredentialsConfig | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string") {
    const text = reader.string(value, path);
    if (text === undefined) return undefined;
    const choice = reader.probe(text);
    if (choice === "shared" || choice === "per-user") return choice;
    return reader.fail(path, `${describeValue(choice)} is not valid; ${CREDENTIALS_CHOICES}`);
  }
  const node = reader.map(value, path);
  if (node === undefined) return undefined;
  reader.knownKeys(node, path, ["exchange", "idJag"]);
  if (node.exchange !== undefined && node.idJag !== undefined)
    return reader.fail(path, 'takes "exchange" or "idJag", not both: a server\'s tokens come one way');
  if (node.idJag !== undefined) {
    const idJag = readIdJag(reader, node.idJag, joinPath(path, "idJag"));
    return idJag === undefined ? undefined : { idJag };
  }
  if (node.exchange === undefined)
    return reader.fail(path, `needs "exchange" or "idJag"; ${CREDENTIALS_CHOICES}`);
  const exchange = readExchange(reader, node.exchange, joinPath(path, "exchange"));
  return exchange === undefined ? undefined : { exchange };
}

function readIdJag(reader: ValueReader, value: unknown, path: string): IdJagCredentialsConfig | undefined {
  const node = reader.map(value, path);
  if (node === undefined) return undefined;
  reader.knownKeys(node, path, ID_JAG_KEYS);
  const clientId = reader.nonEmpty(node.clientId, joinPath(path, "clientId"));
  const serverClientId = reader.nonEmpty(node.serverClientId, joinPath(path, "serverClientId"));
  const issuer = reader.nonEmpty(node.issuer, joinPath(path, "issuer"));
  const clientSecret = reader.nonEmpty(node.clientSecret, joinPath(path, "clientSecret"));
  const serverClientSecret = reader.nonEmpty(node.serverClientSecret, joinPath(path, "serverClientSecret"));
  const scopes = reader.stringList(node.scopes, joinPath(path, "scopes"));
  const typePath = joinPath(path, "subjectTokenType");
  const subjectTokenType = reader.nonEmpty(node.subjectTokenType, typePath);
  if (node.clientId === undefined)
    reader.fail(path, 'needs "clientId": mcplex\'s client at the identity provider, which issues the ID-JAG');
  if (node.serverClientId === undefined)
    reader.fail(
      path,
      "needs \"serverClientId\": mcplex's client at the server's authorization server, which redeems the ID-JAG",
    );
  if (issuer !== undefined && !URL.canParse(reader.probe(issuer)))
    reader.fail(joinPath(path, "issuer"), `${describeValue(issuer)} is not a URL`);
  const type = subjectTokenType === undefined ? undefined : reader.probe(subjectTokenType);
  if (type !== undefined && type !== "access_token" && type !== "id_token") {
    reader.fail(
      typePath,
      `${describeValue(type)} is not valid; use "access_token" (the default) or "id_token"`,
    );
    return undefined;
  }
  for (const secret of [clientSecret, serverClientSecret])
    if (secret !== undefined) reader.markSecret(secret);
  if (clientId === undefined || serverClientId === undefined) return undefined;
  const idJag: IdJagCredentialsConfig = { clientId, serverClientId };
  if (issuer !== undefined) idJag.issuer = issuer;
  if (clientSecret !== undefined) idJag.clientSecret = clientSecret;
  if (serverClientSecret !== undefined) idJag.serverClientSecret = serverClientSecret;
  if (scopes !== undefined) idJag.scopes = scopes;
  if (type !== undefined) idJag.subjectTokenType = type;
  return idJag;
}

function readExchange(reader: ValueReader, value: unknown, path: string): TokenExchangeConfig | undefined {
  const node = reader.map(value, path);
  if (node === undefined) return undefined;
  reader.knownKeys(node, path, EXCHANGE_KEYS);
  const audience = reader.nonEmpty(node.audience, joinPath(path, "audience"));
  const clientId = reader.nonEmpty(node.clientId, joinPath(path, "clientId"));
  const resource = reader.nonEmpty(node.resource, joinPath(path, "resource"));
  const issuer = reader.nonEmpty(node.issuer, joinPath(path, "issuer"));
  const clientSecret = reader.nonEmpty(node.clientSecret, joinPath(path, "clientSecret"));
  const scopes = reader.stringList(node.scopes, joinPath(path, "scopes"));
  if (node.audience === undefined)
    reader.fail(path, 'needs "audience": what the server\'s tokens must name (often its URL)');
  if (node.clientId === undefined)
    reader.fail(path, 'needs "clientId": mcplex\'s client at the identity provider, for the exchange');
  for (const key of ["resource", "issuer"] as const) {
    const url = key === "resource" ? resource : issuer;
    if (url !== undefined && !URL.canParse(reader.probe(url)))
      reader.fail(joinPath(path, key), `${describeValue(url)} is not a URL`);
  }
  if (clientSecret !== undefined) reader.markSecret(clientSecret);
  if (audience === undefined || clientId === undefined) return undefined;
  const exchange: TokenExchangeConfig = { audience, clientId };
  if (resource !== undefined) exchange.resource = resource;
  if (scopes !== undefined) exchange.scopes = scopes;
  if (issuer !== undefined) exchange.issuer = issuer;
  if (clientSecret !== undefined) exchange.clientSecret = clientSecret;
  return exchange;
}

/** The top-level `users:` block: `{ maxConnections, maxPerUser, idleTimeout }`, each optional. */
export function readUsers(reader: ValueReader, value: unknown): UsersConfig | undefined {
  const node = reader.map(value ?? undefined, "users");
  if (node === undefined) return undefined;
  reader.knownKeys(node, "users", ["maxConnections", "maxPerUser", "idleTimeout"]);
  const users: UsersConfig = {};
  const maxConnections = reader.count(node.maxConnections, "users.maxConnections");
  const maxPerUser = reader.count(node.maxPerUser, "users.maxPerUser");
  const idleTimeout = reader.duration(node.idleTimeout, "users.idleTimeout");
  if (maxConnections !== undefined) users.maxConnections = maxConnections;
  if (maxPerUser !== undefined) users.maxPerUser = maxPerUser;
  if (idleTimeout !== undefined) users.idleTimeout = idleTimeout;
  return users;
}

/**
 * Checks where `${user:NAME}` references are in one server read at `path`: only in a per-user
 * server's `env` values, `args` and a remote's `headers` values, which are filled per user.
 */
export function checkUserPlaceholders(reader: ValueReader, server: ServerConfig, path: string): void {
  const perUser = isPerUser(server);
  const fillable: Array<[string, string]> = [];
  const fixed: Array<[string, string]> = [];
  if (server.transport === "stdio") {
    for (const [i, arg] of server.args.entries()) fillable.push([joinPath(joinPath(path, "args"), i), arg]);
    for (const [key, text] of Object.entries(server.env))
      fillable.push([joinPath(joinPath(path, "env"), key), text]);
    fixed.push([joinPath(path, "command"), server.command]);
    if (server.cwd !== undefined) fixed.push([joinPath(path, "cwd"), server.cwd]);
  } else if (
    server.transport === "streamable-http" ||
    server.transport === "sse" ||
    server.transport === "websocket"
  ) {
    for (const [key, text] of Object.entries(server.headers))
      fillable.push([joinPath(joinPath(path, "headers"), key), text]);
    fixed.push([joinPath(path, "url"), server.url]);
  }
  for (const [at, text] of fixed)
    if (hasUserPlaceholder(reader.probe(text)))
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the message shows config syntax
      reader.fail(at, "${user:...} is filled only in env values, args and headers; move it there");
  if (perUser) return;
  for (const [at, text] of fillable)
    if (hasUserPlaceholder(text))
      reader.fail(
        at,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the message shows config syntax
        '${user:...} is a value each signed-in user sets; add "credentials: per-user" to this server, or use ${secret:NAME} for one value shared by all',
      );
}
