/**
 * The words of tool search: which words carry no meaning, and which name the same thing.
 * People ask for a "folder" or a "PR"; tools say "directory" and "pull request".
 */

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
