/**
 * Text from a registry is data: it is shown with its control characters taken out, and written
 * into a config so that nothing in it expands.
 */

/**
 * C0 and C1 control characters, DEL, and the Unicode marks that reorder or hide what a terminal
 * shows (bidirectional overrides and isolates).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it finds.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const ANY_UNPRINTABLE = new RegExp(UNPRINTABLE.source);

/**
 * `text` as it may reach a terminal: every control character (ESC, CSI, OSC, BEL, C1...) and
 * bidirectional mark is taken out, a line break or tab becomes a space, so that a name, a
 * description or a version can neither drive the terminal nor fake a line of output.
 *
 * @example
 * printable("evil\u001b[2J\u001b]0;title\u0007") // "evil[2J]0;title"
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => (c === "\n" || c === "\r" || c === "\t" ? " " : ""));
}

/** Whether `text` holds a character {@link printable} takes out. */
export function hasControlCharacters(text: string): boolean {
  return ANY_UNPRINTABLE.test(text);
}

/**
 * A JSON text whose strings hold nothing a terminal acts on: `JSON.stringify` escapes C0 but
 * leaves DEL, C1 (an 8-bit CSI is U+009B) and the bidirectional marks as they are.
 */
export function printableJson(value: unknown): string {
  return JSON.stringify(value).replace(
    UNPRINTABLE,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/**
 * `text` written into a config so that it loads back as itself: every `${` becomes `$${`, the
 * config's literal `${` (see `expandVariables`). A `$` not before `{` is kept by the expansion
 * as it is, so nothing else needs escaping.
 *
 * @example
 * configLiteral("${secret:other.API_KEY}") // "$${secret:other.API_KEY}"
 */
export function configLiteral(text: string): string {
  // A function, since in a replacement string `$$` means one `$`.
  return text.replaceAll("${", () => "$${");
}

/**
 * Pieces of config text joined, or `undefined` when a `$` at the end of one piece would meet a
 * `{` (or the `${` of a reference) at the start of the next: the join would make a reference
 * neither piece holds, or turn one into literal text.
 */
export function joinConfigText(pieces: readonly string[]): string | undefined {
  for (let i = 1; i < pieces.length; i++) {
    const before = pieces.slice(0, i).join("");
    const after = pieces.slice(i).join("");
    if (before.endsWith("$") && after.startsWith("{")) return undefined;
    if (before.endsWith("$") && after.startsWith("${")) return undefined;
  }
  return pieces.join("");
}
