/**
 * Resource URI rules.
 *
 * URIs are globally meaningful, so a resource keeps its URI whenever that URI is listed by one
 * server only. When several servers list the same URI, each of them lists it in the qualified form
 * `mcplex://<server>/<uri>` (both parts percent-encoded with `encodeURIComponent`), symmetric like
 * the tool naming rule: no server silently takes over a URI another one already exposed. The
 * qualified form is reversible and always routes to the named server, listed or not. A raw URI that
 * several servers list still resolves, to the first of them in server order, so clients holding the
 * raw URI keep working.
 */

/** Scheme of qualified URIs. */
export const QUALIFIED_URI_PREFIX = "mcplex://";

/** Longest URI matched against templates; longer ones only match listed resources. */
const MAX_TEMPLATE_URI_LENGTH = 65_536;

/**
 * The qualified form of a server's URI.
 *
 * @example qualifyUri("docs", "file:///README.md") // "mcplex://docs/file%3A%2F%2F%2FREADME.md"
 */
export function qualifyUri(server: string, uri: string): string {
  return QUALIFIED_URI_PREFIX + encodeURIComponent(server) + "/" + encodeURIComponent(uri);
}

/** Reverses {@link qualifyUri}; `undefined` when `uri` is not a well-formed qualified URI. */
export function parseQualifiedUri(uri: string): { server: string; uri: string } | undefined {
  if (!uri.startsWith(QUALIFIED_URI_PREFIX)) return undefined;
  const rest = uri.slice(QUALIFIED_URI_PREFIX.length);
  const slash = rest.indexOf("/");
  if (slash <= 0) return undefined;
  try {
    return {
      server: decodeURIComponent(rest.slice(0, slash)),
      uri: decodeURIComponent(rest.slice(slash + 1)),
    };
  } catch {
    return undefined;
  }
}

/** A compiled URI template: `true` when a URI could have been expanded from it. */
export type UriTemplateMatcher = (uri: string) => boolean;

const EXPRESSION = /\{([^{}]*)\}/g;
const never: UriTemplateMatcher = () => false;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function expressionPattern(body: string): string | undefined {
  const op = /^[+#./;?&]/.test(body) ? body[0]! : "";
  const vars = (op === "" ? body : body.slice(1)).split(",");
  if (vars.some((v) => !/^[A-Za-z0-9_%.]+(\*|:[0-9]{1,4})?$/.test(v))) return undefined;
  const exploded = vars.some((v) => v.endsWith("*"));
  switch (op) {
    case "":
      return "[^/]+";
    case "+":
      return ".+";
    case "#":
      return "(?:#.*)?";
    case ".":
      return "(?:\\.[^/]*)*";
    case "/":
      return exploded || vars.length > 1 ? "(?:/[^/]*)*" : "/[^/]*";
    case ";":
      return "(?:;[^/?#]*)*";
    default:
      // `?` and `&`: query parameters may all be undefined, so the whole part is optional.
      return "(?:[?&][^#]*)?";
  }
}

/**
 * Compiles an RFC 6570 URI template into a matcher used for routing. Level 1 and 2: `{var}` matches
 * one or more characters other than `/`, `{+var}` one or more of any, `{#var}` an optional fragment.
 * Level-3/4 operators match leniently (query expressions are optional, since undefined variables
 * expand to nothing). A malformed template matches nothing. Built once per template; the SDK's
 * `UriTemplate.match` rebuilds its regex on every call.
 *
 * @example compileUriTemplate("file:///{+path}")("file:///a/b.txt") // true
 */
export function compileUriTemplate(template: string): UriTemplateMatcher {
  let pattern = "^";
  let last = 0;
  for (const m of template.matchAll(EXPRESSION)) {
    const literal = template.slice(last, m.index);
    if (/[{}]/.test(literal)) return never;
    const part = expressionPattern(m[1]!);
    if (part === undefined) return never;
    pattern += escapeRegExp(literal) + part;
    last = m.index + m[0].length;
  }
  const tail = template.slice(last);
  if (/[{}]/.test(tail)) return never;
  const regex = new RegExp(pattern + escapeRegExp(tail) + "$", "s");
  return (uri) => uri.length <= MAX_TEMPLATE_URI_LENGTH && regex.test(uri);
}
