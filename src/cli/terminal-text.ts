/**
 * Control characters, C1 controls and bidirectional overrides: what a terminal acts on rather
 * than shows (an ANSI escape can recolour, move the cursor, retitle the window or, in some
 * terminals, write to the clipboard; `\r` overwrites the line; a bidi override reorders it).
 * Tab and newline are text.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point.
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` as the CLI prints it to a terminal: what a server, a registry or an error message
 * says is shown, never obeyed. Each unsafe character becomes a visible escape (`\x1b`,
 * `\u202e`), so nothing is hidden either.
 *
 * @example
 * console.log(terminalText(result.text)); // "\x1b[2J" prints as the six characters \x1b[2J
 */
export function terminalText(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16)}`;
  });
}

/** What JSON.stringify leaves raw that a terminal acts on (it escapes only U+0000 to U+001F). */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * `value` as JSON for a terminal or a pipe: the same JSON (it parses to the same value), with
 * the characters a terminal would act on written as `\uXXXX` escapes.
 */
export function terminalJson(value: unknown): string {
  return JSON.stringify(value).replace(
    UNSAFE_IN_JSON,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
