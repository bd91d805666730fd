/**
 * The words of tool search: how text becomes terms, which words carry no meaning, and which name
 * the same thing. People ask for a "folder" or a "PR"; tools say "directory" and "pull request".
 */
import { stemmer } from "stemmer";

/** Words too common in tool text and requests to tell tools apart: dropped from both. */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a an and are as at be by can do does for from has have how i if in into is it its me my of on " +
    "or our please should so some than that the their them then there these this those to use used " +
    "using was we what when where which while who will with would you your"
  ).split(" "),
);

/** Words of a request that ask rather than say what for ("give me", "I want"): dropped from queries. */
export const QUERY_FILLER: ReadonlySet<string> = new Set(
  "give tell want need let could hey just also something anything whatever".split(" "),
);

/**
 * Groups of words that mean the same in tool land: general computing vocabulary and common
 * abbreviations, not any one server's words. A query word in a group also searches the others.
 */
const SYNONYM_GROUPS: readonly string[] = [
  "directory folder dir",
  "repository repo",
  "pull_request pr",
  "merge_request mr",
  "issue ticket bug",
  "image picture photo",
  "delete remove erase",
  "create make new",
  "find search lookup",
  "run execute exec",
  "terminal shell",
  "kill terminate",
  "rename move",
  "url link",
  "website site",
  "javascript js",
  "database db",
  "kubernetes k8s kube",
  "environment env",
  "variable var",
  "configuration config settings setting",
  "documentation docs doc",
  "message msg",
  "user account member",
  "error exception crash failure",
  "compress gzip gz zip archive",
  "coordinates latitude longitude lat lng",
  "directions route",
  "elevation altitude",
  "keyboard keystroke key",
  "dropdown select",
  "dialog popup alert modal",
  "hover mouseover",
  "monitor watch watcher",
  "fetch download retrieve",
];

/**
 * For each word, the other words of its groups (`pull_request` stands for the two words).
 *
 * @example SYNONYMS.get("folder") // ["directory", "dir"]
 */
export const SYNONYMS: ReadonlyMap<string, readonly string[]> = (() => {
  const map = new Map<string, string[]>();
  for (const group of SYNONYM_GROUPS) {
    const words = group.split(" ");
    for (const word of words) {
      const others = words.filter((w) => w !== word).flatMap((w) => w.split("_"));
      map.set(word, [...(map.get(word) ?? []), ...others]);
    }
  }
  return map;
})();

const URL_VALUE =
  /\b(?:[a-z][a-z0-9+.-]*:\/\/|www\.)\S+|\b[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|dev|app|ai|co|edu|gov)(?:\/\S*)?/giu;
const FILE_VALUE =
  /(?:[\w.-]*\/)*[\w-]*\.(?:ts|tsx|js|jsx|mjs|cjs|json|md|txt|csv|ya?ml|toml|py|rb|go|rs|java|c|h|cpp|html|css|png|jpe?g|gif|svg|pdf|log|sh|xml|sql)\b/giu;
const EMAIL_VALUE = /\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b/gu;

/**
 * A request with its argument values replaced by their kind: a URL by `url`, a file name or path
 * by `file`, an address by `email`. The value says what a tool takes, not what it does, and its
 * pieces (`https`, `com`, `ts`) would match unrelated tools.
 *
 * @example valueKinds("open https://example.com/a and read notes.txt") // "open url and read file"
 */
export function valueKinds(query: string): string {
  return query.replace(EMAIL_VALUE, " email ").replace(URL_VALUE, " url ").replace(FILE_VALUE, " file ");
}

/**
 * Splits text into words: on anything but letters and digits (so `_`, `-`, `.`, `/`), and between
 * camelCase humps (`searchIssues`, `HTTPServer` -> `HTTP`, `Server`).
 *
 * @example splitWords("github__search_issues getFileContents") // ["github", "search", "issues", "get", "File", "Contents"]
 */
export function splitWords(text: string): string[] {
  return text
    .replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, "$1 $2")
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, "$1 $2")
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0);
}

/** Lower case, stop words out, then the Porter stem (`listing`, `lists` -> `list`). */
export function normalizeTerm(term: string): string | null {
  const lower = term.toLowerCase();
  if (STOP_WORDS.has(lower)) return null;
  return stemmer(lower);
}

/** Weight of a synonym's matches against the word the query used. */
const SYNONYM_WEIGHT = 0.5;

/**
 * A query as weighted search terms: filler and stop words out, every word stemmed, with its
 * synonyms at {@link SYNONYM_WEIGHT}. `want a folder` searches `folder` (1), `directori` and `dir`.
 */
export function queryTerms(
  query: string,
  synonyms: ReadonlyMap<string, readonly string[]>,
): Map<string, number> {
  const terms = new Map<string, number>();
  const add = (term: string | null, weight: number) => {
    if (term !== null && (terms.get(term) ?? 0) < weight) terms.set(term, weight);
  };
  for (const word of splitWords(valueKinds(query))) {
    const lower = word.toLowerCase();
    if (QUERY_FILLER.has(lower)) continue;
    add(normalizeTerm(lower), 1);
    for (const synonym of synonyms.get(lower) ?? []) add(normalizeTerm(synonym), SYNONYM_WEIGHT);
  }
  return terms;
}
