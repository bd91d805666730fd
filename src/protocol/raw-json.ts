// A result relayed as the text it came in: what such a result may hold (RAW_MEMBERS), the
// object it stands for (RawJson), and the reader that keeps a server's answer so (readRawAnswer),
// which checks the result against the same members.

/**
 * The members a {@link RawJson} result may have: those no layer of the call path reads
 * (`content` and `structuredContent` of a tool result, `contents` of a resource, `description`
 * and `messages` of a prompt), and `isError` only as `false`. Every check the path makes on a
 * result (`isError === true`, `resultType`, `_meta`, `ttlMs`, `cacheScope`) reads a member
 * outside this list, so it finds nothing on a RawJson, as it would find nothing on the object.
 */
export const RAW_MEMBERS: readonly string[] = [
  "content",
  "structuredContent",
  "contents",
  "description",
  "messages",
  "isError",
];

/**
 * A result kept as the JSON text it came in, for one the gateway only relays: parsing a tool's
 * answer and writing it again for the client was about 12k of the 89k instructions of a stdio
 * `tools/call` (callgrind). It stands for an object with none but {@link RAW_MEMBERS}, so that a
 * check of any other member is answered right without parsing (`undefined`). What reads the
 * members themselves, copies or changes the result asks for {@link value} (or {@link jsonOf}).
 * `JSON.stringify` writes it as the object it stands for; `stringifyMessage` writes its text.
 *
 * Only a caller that asked for it gets one (`CallOptions.rawResult`), and a gateway asks only
 * while every interceptor on its path is known to read no more than `isError`.
 *
 * @example
 * const result = new RawJson('{"content":[]}');
 * result.isError; // undefined, as on { content: [] }
 * result.value().content; // []
 */
export class RawJson {
  readonly #text: string;
  #value: Record<string, unknown> | undefined;

  constructor(text: string) {
    this.#text = text;
  }

  /** The JSON text of the object, exactly as the server sent it. */
  get text(): string {
    return this.#text;
  }

  /** The object, parsed on the first call. */
  value(): Record<string, unknown> {
    this.#value ??= JSON.parse(this.#text) as Record<string, unknown>;
    return this.#value;
  }

  /** For `JSON.stringify`: the object itself. */
  toJSON(): Record<string, unknown> {
    return this.value();
  }
}

/** `result` as an object: a {@link RawJson} parsed, anything else as it is. */
export function jsonOf<T>(result: T): T {
  return (result instanceof RawJson ? result.value() : result) as T;
}

/** A server's answer read by {@link readRawAnswer}: its result kept as text. */
export interface RawAnswer {
  jsonrpc: "2.0";
  id: number;
  result: RawJson;
}

const TAB = 9;
const SPACE = 32;
const QUOTE = 34;
const PLUS = 43;
const COMMA = 44;
const MINUS = 45;
const DOT = 46;
const SLASH = 47;
const ZERO = 48;
const ONE = 49;
const TWO = 50;
const NINE = 57;
const COLON = 58;
const UPPER_E = 69;
const OPEN_BRACKET = 91;
const BACKSLASH = 92;
const CLOSE_BRACKET = 93;
const LOWER_B = 98;
const LOWER_E = 101;
const LOWER_F = 102;
const LOWER_N = 110;
const LOWER_R = 114;
const LOWER_T = 116;
const LOWER_U = 117;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;

/** Containers open at once past which a result is left to `JSON.parse` (one bit each below). */
const MAX_DEPTH = 30;

/** Characters of a string read one by one before the rest is left to {@link STRING_REST}. */
const SHORT_STRING = 16;

/** The rest of a long string up to its quote, a backslash or a control character. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters JSON refuses in a string.
const STRING_REST = /[^"\\\u0000-\u001f]*/y;

/** A JSON string, by JSON's grammar (a run of plain characters between escapes: no backtracking). */
const STRING = String.raw`"[^"\\\u0000-\u001f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\u0000-\u001f]*)*"`;
const TEXT_BLOCK = String.raw`\{"type":"text","text":${STRING}\}`;
/** The commonest tool result, written without spaces: text blocks, perhaps `isError: false`. */
const TEXT_RESULT = String.raw`\{"content":\[(?:${TEXT_BLOCK}(?:,${TEXT_BLOCK})*)?\](?:,"isError":false)?\}`;
const ID = "(0|[1-9][0-9]{0,15})";
/** A text result's answer as most servers write it: `jsonrpc`, `id`, `result` (Python, Go...). */
const TEXT_ANSWER = new RegExp(String.raw`^\{"jsonrpc":"2\.0","id":${ID},"result":(${TEXT_RESULT})\}$`);
/** The same, as the TypeScript SDK writes it: `result`, `jsonrpc`, `id`. */
const TEXT_ANSWER_RESULT_FIRST = new RegExp(
  String.raw`^\{"result":(${TEXT_RESULT}),"jsonrpc":"2\.0","id":${ID}\}$`,
);

/** Which member of a result a key is (see {@link rawMember}). */
const NOT_RAW = 0;
const RAW = 1;
const IS_ERROR = 2;

/**
 * Reads a line from a server as an answer with its result kept as text (a {@link RawJson}),
 * without parsing the result: `{"jsonrpc":"2.0","id":7,"result":{…}}`, members in any order, a
 * non-negative integer id (the ids mcplex sends), and a result object whose members are all
 * {@link RAW_MEMBERS} (`isError` only as `false`). The whole line is checked as JSON on the way,
 * by the grammar `JSON.parse` follows, so the text relayed is JSON. Between tokens it takes
 * spaces and tabs, never a carriage return (which ends a line in an SSE stream).
 *
 * It is one loop with the open containers in a bitmask, and long strings skipped by a regular
 * expression: a recursive reader that looked at every character in JavaScript cost as much
 * as `JSON.parse` itself (30 instructions a character, `startsWith` 450 a call).
 *
 * Returns `undefined` for anything else (another shape, a result that a layer may read, a
 * duplicated member, JSON it does not vouch for): the caller parses the line as before.
 *
 * @example
 * readRawAnswer('{"jsonrpc":"2.0","id":7,"result":{"content":[]}}')?.result.text; // '{"content":[]}'
 */
export function readRawAnswer(line: string): RawAnswer | undefined {
  // The commonest answers are read by one regular expression, in native code.
  const resultFirst = code(line, 2) === LOWER_R;
  const text = resultFirst ? TEXT_ANSWER_RESULT_FIRST.exec(line) : TEXT_ANSWER.exec(line);
  if (text !== null) {
    const id = Number(text[resultFirst ? 2 : 1]);
    if (id <= Number.MAX_SAFE_INTEGER)
      return { jsonrpc: "2.0", id, result: new RawJson(text[resultFirst ? 1 : 2]!) };
  }
  return readAnyRawAnswer(line);
}

/** {@link readRawAnswer} of any answer it takes, its members in any order and spaced. */
function readAnyRawAnswer(line: string): RawAnswer | undefined {
  let at = spaces(line, 0);
  if (code(line, at) !== OPEN_BRACE) return undefined;
  at = spaces(line, at + 1);
  let seen = 0;
  let id = 0;
  let start = -1;
  let end = -1;
  for (;;) {
    const key = at;
    at = stringEnd(line, at);
    if (at < 0) return undefined;
    const length = at - key - 2;
    let member = 0;
    if (length === 7 && isKey(line, key, "jsonrpc")) member = 1;
    else if (length === 2 && isKey(line, key, "id")) member = 2;
    else if (length === 6 && isKey(line, key, "result")) member = 4;
    if (member === 0 || (seen & member) !== 0) return undefined;
    seen |= member;
    at = colon(line, at);
    if (at < 0) return undefined;
    if (member === 1) {
      if (
        code(line, at) !== QUOTE ||
        code(line, at + 1) !== TWO ||
        code(line, at + 2) !== DOT ||
        code(line, at + 3) !== ZERO ||
        code(line, at + 4) !== QUOTE
      )
        return undefined;
      at += 5;
    } else if (member === 2) {
      let c = code(line, at);
      if (c === ZERO) {
        at++;
      } else if (c >= ONE && c <= NINE) {
        // Past 2^53 a number is no longer the integer it was written as: left to JSON.parse.
        do {
          id = id * 10 + (c - ZERO);
          c = code(line, ++at);
        } while (c >= ZERO && c <= NINE);
        if (id > Number.MAX_SAFE_INTEGER) return undefined;
      } else {
        return undefined;
      }
    } else {
      start = at;
      end = resultEnd(line, at);
      if (end < 0) return undefined;
      at = end;
    }
    at = spaces(line, at);
    const c = code(line, at);
    if (c === COMMA) {
      at = spaces(line, at + 1);
      continue;
    }
    if (c !== CLOSE_BRACE || seen !== 7 || spaces(line, at + 1) !== line.length) return undefined;
    return { jsonrpc: "2.0", id, result: new RawJson(line.slice(start, end)) };
  }
}

/**
 * After the result object at `at`, or -1: any JSON inside, and members of its own all raw ones
 * (`isError` only as `false`).
 */
function resultEnd(text: string, at: number): number {
  if (code(text, at) !== OPEN_BRACE) return -1;
  let i = at;
  /** Containers open around the value being read. */
  let depth = 0;
  /** Bit d set: the container at depth d + 1 is an object (else an array). */
  let objects = 0;
  // Each turn reads one value at `i`, then the commas and closing brackets after it, up to the
  // next value (after its key when in an object).
  for (;;) {
    let c = code(text, i);
    let opened = false;
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      const next = spaces(text, i + 1);
      if (code(text, next) === (c === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET)) {
        i = next + 1;
      } else {
        if (depth === MAX_DEPTH) return -1;
        if (c === OPEN_BRACE) objects |= 1 << depth;
        depth++;
        i = next;
        opened = true;
      }
    } else if (c === QUOTE) {
      i = stringEnd(text, i);
    } else if (c === LOWER_T) {
      i = literalEnd(text, i, "true");
    } else if (c === LOWER_F) {
      i = literalEnd(text, i, "false");
    } else if (c === LOWER_N) {
      i = literalEnd(text, i, "null");
    } else {
      i = numberEnd(text, i);
    }
    if (i < 0) return -1;
    if (!opened) {
      // After a value: commas to the next one, or brackets that close containers.
      for (;;) {
        if (depth === 0) return i;
        i = spaces(text, i);
        c = code(text, i);
        const inObject = (objects & (1 << (depth - 1))) !== 0;
        if (c === COMMA) {
          i = spaces(text, i + 1);
          break;
        }
        if (c !== (inObject ? CLOSE_BRACE : CLOSE_BRACKET)) return -1;
        depth--;
        objects &= ~(1 << depth);
        i++;
      }
    }
    if ((objects & (1 << (depth - 1))) !== 0) {
      // In an object: a key and its colon first.
      const key = i;
      i = stringEnd(text, i);
      if (i < 0) return -1;
      const member = depth === 1 ? rawMember(text, key, i) : RAW;
      if (member === NOT_RAW) return -1;
      i = colon(text, i);
      if (i < 0) return -1;
      if (member === IS_ERROR) {
        // Read here, as a value with nothing to open: the loop goes on after it.
        if (literalEnd(text, i, "false") < 0) return -1;
      }
    }
  }
}

/**
 * Which member of a result the key at `from` (its opening quote) to `to` is: one of
 * {@link RAW_MEMBERS} (by length, then text), or {@link NOT_RAW}.
 */
function rawMember(text: string, from: number, to: number): number {
  switch (to - from - 2) {
    case 7:
      if (isKey(text, from, "content")) return RAW;
      return isKey(text, from, "isError") ? IS_ERROR : NOT_RAW;
    case 8:
      return isKey(text, from, "contents") || isKey(text, from, "messages") ? RAW : NOT_RAW;
    case 11:
      return isKey(text, from, "description") ? RAW : NOT_RAW;
    case 17:
      return isKey(text, from, "structuredContent") ? RAW : NOT_RAW;
    default:
      return NOT_RAW;
  }
}

/** Whether the string at `from` (its opening quote), of the key's length, is `key` without escapes. */
function isKey(text: string, from: number, key: string): boolean {
  for (let k = 0; k < key.length; k++) if (text.charCodeAt(from + 1 + k) !== key.charCodeAt(k)) return false;
  return true;
}

/**
 * After the string at `at` (its opening quote), or -1: escapes as JSON has them, no control
 * character unescaped (JSON.parse refuses those).
 */
function stringEnd(text: string, at: number): number {
  if (code(text, at) !== QUOTE) return -1;
  let i = at + 1;
  let looked = 0;
  for (;;) {
    let c = code(text, i);
    if (c !== QUOTE && c !== BACKSLASH && c >= SPACE && ++looked > SHORT_STRING) {
      STRING_REST.lastIndex = i;
      STRING_REST.test(text);
      i = STRING_REST.lastIndex;
      c = code(text, i);
    }
    if (c === QUOTE) return i + 1;
    if (c === BACKSLASH) {
      const e = code(text, i + 1);
      if (e === LOWER_U) {
        if (!hex(text, i + 2) || !hex(text, i + 3) || !hex(text, i + 4) || !hex(text, i + 5)) return -1;
        i += 6;
      } else if (
        e === QUOTE ||
        e === BACKSLASH ||
        e === SLASH ||
        e === LOWER_B ||
        e === LOWER_F ||
        e === LOWER_N ||
        e === LOWER_R ||
        e === LOWER_T
      ) {
        i += 2;
      } else {
        return -1;
      }
    } else if (c >= SPACE) {
      i++;
    } else {
      // A control character, or the end of the text before the closing quote (-1).
      return -1;
    }
  }
}

function hex(text: string, at: number): boolean {
  const c = code(text, at) | 32;
  return (c >= ZERO && c <= NINE) || (c >= 97 && c <= 102);
}

/** After `word` at `at`, or -1 when it is not there. */
function literalEnd(text: string, at: number, word: string): number {
  for (let k = 0; k < word.length; k++) if (code(text, at + k) !== word.charCodeAt(k)) return -1;
  return at + word.length;
}

/** After the number at `at`, by JSON's grammar: `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`. */
function numberEnd(text: string, at: number): number {
  let i = at;
  let c = code(text, i);
  if (c === MINUS) c = code(text, ++i);
  if (c === ZERO) {
    c = code(text, ++i);
  } else if (c >= ONE && c <= NINE) {
    do c = code(text, ++i);
    while (c >= ZERO && c <= NINE);
  } else {
    return -1;
  }
  if (c === DOT) {
    c = code(text, ++i);
    if (!(c >= ZERO && c <= NINE)) return -1;
    do c = code(text, ++i);
    while (c >= ZERO && c <= NINE);
  }
  if (c === LOWER_E || c === UPPER_E) {
    c = code(text, ++i);
    if (c === PLUS || c === MINUS) c = code(text, ++i);
    if (!(c >= ZERO && c <= NINE)) return -1;
    do c = code(text, ++i);
    while (c >= ZERO && c <= NINE);
  }
  return i;
}

/**
 * The character at `at`, or -1 past the end: never a read out of bounds, which would throw
 * V8's optimised code back to the interpreter and leave every read of that site a slow call.
 */
function code(text: string, at: number): number {
  return at < text.length ? text.charCodeAt(at) : -1;
}

/** After the spaces and tabs from `at` (JSON's other white space ends a line here, or in SSE). */
function spaces(text: string, at: number): number {
  let i = at;
  for (let c = code(text, i); c === SPACE || c === TAB; c = code(text, ++i));
  return i;
}

/** After the colon (and spaces around it) that follows a key ending at `at`, or -1. */
function colon(text: string, at: number): number {
  const i = spaces(text, at);
  return code(text, i) === COLON ? spaces(text, i + 1) : -1;
}
