/**
 * Every client-to-server JSON-RPC method mcplex knows, one row each: the revisions that have
 * it, what its params name, and how the gateway treats it. The gateway, its layers and its
 * fronts read these rows instead of keeping lists of their own, so a new method (an extension's
 * `tasks/get`, a vendor's `acme/search`) is one row: a forwarded row whose target resolves is
 * sent to the server that owns the target, with no other code. A method the gateway answers
 * itself is its row here and its handler, by the same name, in `src/gateway/methods/` (a test
 * keeps the two in step); these rows are the wire facts alone and import nothing of the gateway.
 */

/** The protocol families a method exists in: `2025` (the `initialize` revisions, 2024-11-05 too), `2026`. */
export type RevisionFamily = "2025" | "2026";

/**
 * What a request's params name, and so which server answers it:
 * - `tool`, `prompt`: an exposed name (rewritten to the server's own name when forwarded);
 * - `resource`: a URI;
 * - `completion`: a `ref` to a prompt or a resource template;
 * - `server`: a server's name, as the catalog shows it;
 * - `task`: a task handle, the id a server minted for a task, wrapped by the gateway in a
 *   handle that names the server (see the tasks extension's rows);
 * - `none`: nothing; the gateway answers itself (lists, discovery, ping).
 */
export type TargetKind = "tool" | "prompt" | "resource" | "completion" | "server" | "task" | "none";

/** One method's row. */
export interface MethodRow {
  readonly method: string;
  /** The families that have it; a request of another family is answered method-not-found. */
  readonly revisions: readonly RevisionFamily[];
  readonly target: TargetKind;
  /**
   * The param that holds the target's name or URI. Default: `name` for tools, prompts and
   * servers, `uri` for resources, `taskId` for tasks (`completion` reads `ref`).
   */
  readonly targetParam?: string;
  /**
   * Sent to the target's server with the client's call options: its signal, capabilities,
   * progress relay and server-request handler. Watched by the dashboard and call watchers.
   */
  readonly forwarded: boolean;
  /** May answer `input_required` in 2026 (a 2025 server's requests are parked for the client). */
  readonly inputRequired: boolean;
  /** Its 2026 results carry `ttlMs` and `cacheScope`. */
  readonly cacheable: boolean;
  /** Answered or narrowed by a catalog view (`search` and `code` mode). */
  readonly view: boolean;
  /**
   * The param a 2026 POST's `Mcp-Name` header mirrors (the spec names it for `tools/call`,
   * `prompts/get` and `resources/read`; the tasks extension for `tasks/get`, `tasks/update` and
   * `tasks/cancel`).
   */
  readonly nameHeader?: "name" | "uri" | "taskId";
}

/** A row as written: what is not said is `false` (and both families). */
export type MethodRowInput = Pick<MethodRow, "method" | "target"> &
  Partial<Omit<MethodRow, "method" | "target">>;

const BOTH: readonly RevisionFamily[] = ["2025", "2026"];

function row(input: MethodRowInput): MethodRow {
  return {
    revisions: BOTH,
    forwarded: false,
    inputRequired: false,
    cacheable: false,
    view: false,
    ...input,
  };
}

/** The methods of the MCP revisions mcplex speaks. */
export const STANDARD_METHODS: readonly MethodRow[] = [
  row({ method: "initialize", target: "none", revisions: ["2025"] }),
  row({ method: "ping", target: "none", revisions: ["2025"] }),
  row({ method: "logging/setLevel", target: "none", revisions: ["2025"] }),
  row({ method: "server/discover", target: "none", revisions: ["2026"], cacheable: true }),
  row({ method: "subscriptions/listen", target: "none", revisions: ["2026"] }),
  row({ method: "tools/list", target: "none", cacheable: true, view: true }),
  row({ method: "prompts/list", target: "none", cacheable: true }),
  row({ method: "resources/list", target: "none", cacheable: true, view: true }),
  row({ method: "resources/templates/list", target: "none", cacheable: true }),
  row({
    method: "tools/call",
    target: "tool",
    forwarded: true,
    inputRequired: true,
    view: true,
    nameHeader: "name",
  }),
  row({ method: "prompts/get", target: "prompt", forwarded: true, inputRequired: true, nameHeader: "name" }),
  row({
    method: "resources/read",
    target: "resource",
    forwarded: true,
    inputRequired: true,
    cacheable: true,
    view: true,
    nameHeader: "uri",
  }),
  row({ method: "completion/complete", target: "completion", forwarded: true }),
  row({ method: "resources/subscribe", target: "resource", revisions: ["2025"] }),
  row({ method: "resources/unsubscribe", target: "resource", revisions: ["2025"] }),
  ...taskMethods(),
  ...skillsMethods(),
];

/**
 * The tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28) and the experimental tasks of
 * 2025-11-25: a `tools/call` may be answered with a task, whose id the gateway wraps in a handle
 * naming its server; these methods carry that handle in `taskId` (and, in 2026, in `Mcp-Name`).
 * 2026 dropped `tasks/result` and `tasks/list` (method not found) and added `tasks/update`;
 * `tasks/list` is the gateway's own answer (each caller's own tasks), never forwarded whole.
 */
function taskMethods(): MethodRow[] {
  return [
    row({ method: "tasks/get", target: "task", forwarded: true, nameHeader: "taskId" }),
    row({
      method: "tasks/update",
      target: "task",
      revisions: ["2026"],
      forwarded: true,
      nameHeader: "taskId",
    }),
    row({ method: "tasks/cancel", target: "task", forwarded: true, nameHeader: "taskId" }),
    // Blocks until the task ends; a 2025 server asks its client for input on it meanwhile.
    row({
      method: "tasks/result",
      target: "task",
      revisions: ["2025"],
      forwarded: true,
      inputRequired: true,
    }),
    row({ method: "tasks/list", target: "none", revisions: ["2025"] }),
  ];
}

/**
 * The skills extension (SEP-2640, `io.modelcontextprotocol/skills`): `skills/list` is answered
 * by the gateway from every server that declares the extension (a merged cursor pages through
 * each in turn); `skills/get` and `resources/directory/read` name a `skill://` URI and go to the
 * server it belongs to. In both revisions: a 2025 server declares the extension in `initialize`.
 */
function skillsMethods(): MethodRow[] {
  return [
    row({ method: "skills/list", target: "none", cacheable: true }),
    row({ method: "skills/get", target: "resource", forwarded: true, cacheable: true }),
    row({ method: "resources/directory/read", target: "resource", forwarded: true }),
  ];
}

/**
 * The rows one gateway serves: the standard ones and those its embedder adds. Lookups are one
 * map read; the sets the layers test against are computed once, here.
 *
 * @example
 * const methods = new MethodTable([{ method: "acme/search", target: "tool", forwarded: true }]);
 * methods.get("acme/search")?.forwarded; // true
 */
export class MethodTable {
  readonly #rows = new Map<string, MethodRow>();

  constructor(extra: readonly MethodRowInput[] = []) {
    for (const r of STANDARD_METHODS) this.#rows.set(r.method, r);
    for (const input of extra) {
      if (this.#rows.has(input.method) && STANDARD_METHODS.some((s) => s.method === input.method)) {
        throw new TypeError(`${input.method} is a standard MCP method; its row cannot be replaced`);
      }
      this.#rows.set(input.method, row(input));
    }
  }

  /** The row of `method`, or `undefined` for a method mcplex does not know. */
  get(method: string): MethodRow | undefined {
    return this.#rows.get(method);
  }

  /** Whether a request of `family` may name `method` (unknown methods are the route's to refuse). */
  inFamily(method: string, family: RevisionFamily): boolean {
    const r = this.#rows.get(method);
    return r === undefined || r.revisions.includes(family);
  }

  /** Every known method name (the bounded values of a metrics label). */
  names(): IterableIterator<string> {
    return this.#rows.keys();
  }
}

/** The param a row's target is read from. */
export function targetParamOf(r: MethodRow): string | undefined {
  if (r.targetParam !== undefined) return r.targetParam;
  switch (r.target) {
    case "tool":
    case "prompt":
    case "server":
      return "name";
    case "resource":
      return "uri";
    case "task":
      return "taskId";
    case "completion":
      return "ref";
    default:
      return undefined;
  }
}

/** The table of the standard methods alone (for code that serves no embedder's rows). */
export const STANDARD_METHOD_TABLE = new MethodTable();
