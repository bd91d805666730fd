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
