import { describeValue, joinPath } from "./config-issues.js";
import type { IdJagConfig, OAuthConfig, TokenSource } from "./types.js";
import type { RawMap, ValueReader } from "./value-reader.js";

/** The `oauth` keys of the assertion grants and DPoP, read here apart from the rest of `oauth`. */
export const OAUTH_GRANT_KEYS = ["assertion", "dpop", "idJag"] as const;
/** The values `oauth.grant` takes. */
export const OAUTH_GRANTS = ["authorization_code", "client_credentials", "jwt-bearer", "id-jag"] as const;

const TOKEN_SOURCE_KEYS = ["file", "command", "value"];
const ID_JAG_KEYS = ["tokenEndpoint", "issuer", "clientId", "clientSecret", "idToken"];

/**
 * Reads `oauth.assertion`, `oauth.dpop` and `oauth.idJag` into `oauth`, and checks that the
 * grant has what it needs: `jwt-bearer` an `assertion`, `id-jag` an `idJag` and the client's
 * credentials at the MCP server's authorization server. `resolveFile` makes a relative
 * `file:` relative to the config file.
 */
export function readOAuthGrants(
  reader: ValueReader,
  node: RawMap,
  path: string,
  oauth: OAuthConfig,
  resolveFile: (file: string) => string,
): void {
  const dpop = reader.boolean(node.dpop, joinPath(path, "dpop"));
  if (dpop !== undefined) oauth.dpop = dpop;
  const assertionPath = joinPath(path, "assertion");
  const assertion = readTokenSource(reader, node.assertion, assertionPath, resolveFile);
  if (assertion !== undefined) oauth.assertion = assertion;
  const idJag = readIdJag(reader, node.idJag, joinPath(path, "idJag"), resolveFile);
  if (idJag !== undefined) oauth.idJag = idJag;

  if (oauth.grant === "jwt-bearer" && node.assertion === undefined) {
    reader.fail(
      assertionPath,
      "the jwt-bearer grant needs the workload's JWT: give assertion: { file: PATH }",
    );
  }
  if (oauth.grant !== "jwt-bearer" && node.assertion !== undefined) {
    reader.fail(assertionPath, 'is for the jwt-bearer grant; add grant: "jwt-bearer" or remove it');
  }
  if (oauth.grant === "id-jag") {
    if (node.idJag === undefined) {
      reader.fail(joinPath(path, "idJag"), "the id-jag grant needs the identity provider: give idJag: {...}");
    }
    if (oauth.clientId === undefined || oauth.clientSecret === undefined) {
      reader.fail(
        path,
        "the id-jag grant needs clientId and clientSecret at the server's authorization server",
      );
    }
  } else if (node.idJag !== undefined) {
    reader.fail(joinPath(path, "idJag"), 'is for the id-jag grant; add grant: "id-jag" or remove it');
  }
}

/** `{ file: PATH }`, `{ command: [PROGRAM, ARG...] }` or `{ value: TEXT }`. */
function readTokenSource(
  reader: ValueReader,
  value: unknown,
  path: string,
  resolveFile: (file: string) => string,
): TokenSource | undefined {
  const node = reader.map(value, path);
  if (node === undefined) return undefined;
  reader.knownKeys(node, path, TOKEN_SOURCE_KEYS);
  const given = TOKEN_SOURCE_KEYS.filter((key) => node[key] !== undefined);
  if (given.length !== 1) {
    return reader.fail(
      path,
      `give exactly one of file, command or value, not ${given.length === 0 ? "none" : given.join(" and ")}`,
    );
  }
  if (node.file !== undefined) {
    const file = reader.nonEmpty(node.file, joinPath(path, "file"));
    return file === undefined ? undefined : { file: resolveFile(file) };
  }
  if (node.command !== undefined) {
    const command = reader.stringList(node.command, joinPath(path, "command"));
    if (command === undefined) return undefined;
    if (command.length === 0 || command[0]?.trim() === "") {
      return reader.fail(
        joinPath(path, "command"),
        `${describeValue(node.command)} names no program; write it like ["cat", "/run/token"]`,
      );
    }
    return { command };
  }
  const text = reader.nonEmpty(node.value, joinPath(path, "value"));
  if (text === undefined) return undefined;
  reader.markSecret(text);
  return { value: text };
}

function readIdJag(
  reader: ValueReader,
  value: unknown,
  path: string,
  resolveFile: (file: string) => string,
): IdJagConfig | undefined {
  const node = reader.map(value, path);
  if (node === undefined) return undefined;
  reader.knownKeys(node, path, ID_JAG_KEYS);
  const text = (key: string) => reader.nonEmpty(node[key], joinPath(path, key));
  const urls: Partial<Record<"tokenEndpoint" | "issuer", string>> = {};
  for (const key of ["tokenEndpoint", "issuer"] as const) {
    const url = text(key);
    if (url === undefined) continue;
    if (!URL.canParse(url)) reader.fail(joinPath(path, key), `${describeValue(url)} is not a URL`);
    else urls[key] = url;
  }
  if (node.tokenEndpoint === undefined && node.issuer === undefined) {
    reader.fail(path, "give the identity provider's tokenEndpoint, or its issuer to discover it");
  }
  const clientId = text("clientId");
  if (clientId === undefined && node.clientId === undefined) {
    reader.fail(joinPath(path, "clientId"), "mcplex's client id at the identity provider is needed");
  }
  const clientSecret = text("clientSecret");
  if (clientSecret !== undefined) reader.markSecret(clientSecret);
  const idTokenPath = joinPath(path, "idToken");
  if (node.idToken === undefined) {
    reader.fail(idTokenPath, "say where the user's ID token comes from: { file: PATH }, { command: [...] }");
  }
  const idToken = readTokenSource(reader, node.idToken, idTokenPath, resolveFile);
  if (clientId === undefined || idToken === undefined) return undefined;
  return {
    ...urls,
    clientId,
    ...(clientSecret === undefined ? {} : { clientSecret }),
    idToken,
  };
}
