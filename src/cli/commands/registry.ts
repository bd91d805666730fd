import { resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import { Writable } from "node:stream";
import { addServerEntry } from "../../config/add-server-entry.js";
import { resolveConfigPath } from "../../config/load-config.js";
import { MCPLEX_SERVER_KEYS, SERVER_NAME } from "../../config/read-server.js";
import { SecretStore } from "../../config/secret-store.js";
import { RegistryError } from "../../errors.js";
import type { EntryInput, InputText } from "../../registry/entry-value.js";
import { hasProgram } from "../../registry/find-program.js";
import { RegistryClient } from "../../registry/registry-client.js";
import { printable, printableJson } from "../../registry/registry-text.js";
import { cardTarget, readServerCards } from "../../registry/server-card.js";
import { planEntry } from "../../registry/server-entry.js";
import type { ServerJson } from "../../registry/server-json.js";
import { addDefinition } from "../definitions/add.js";
import { searchDefinition } from "../definitions/search.js";
import { EXIT, UsageError } from "../output.js";
import { parseCommandArgs } from "../parse-command-args.js";

/** `mcplex search WORDS [--registry URL] [--limit N] [--json]`: servers of the MCP Registry. */
export async function searchCommand(args: string[]): Promise<number> {
  const { values, positionals } = await parseCommandArgs(searchDefinition, args, { allowPositionals: true });
  const limit = values.limit === undefined ? 30 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError("--limit takes a whole number above 0");
  const client = new RegistryClient(values.registry === undefined ? {} : { url: values.registry });
  const items = await printableErrors(() => client.search(positionals.join(" "), { limit }));
  if (values.json === true) {
    console.log(printableJson(items.map((item) => item.server)));
    return EXIT.ok;
  }
  if (items.length === 0) {
    console.error(
      `mcplex: no server in ${printable(client.url)} matches "${printable(positionals.join(" "))}"`,
    );
    return EXIT.ok;
  }
  // Every text of the registry's is shown without its control characters: a name or a
  // description must not clear the screen, hide text or forge a line.
  for (const { server } of items) {
    console.log(printable(`${server.name}  ${text(server.version)}  ${kinds(server)}`));
    if (server.description) console.log(`    ${printable(text(server.description))}`);
  }
  console.error(`${items.length} servers; add one with: mcplex add NAME`);
  return EXIT.ok;
}

/** A field a registry should have given as a string, as text whatever it gave. */
function text(value: unknown): string {
  return typeof value === "string" ? value : value === undefined ? "" : JSON.stringify(value);
}

/**
 * Runs `work`, its errors with their messages and hints made printable: they quote the
 * registry's names and values.
 */
async function printableErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof RegistryError)
      throw new RegistryError(
        error.code,
        printable(error.message),
        {
          ...(error.path === undefined ? {} : { path: printable(error.path) }),
          ...(error.hint === undefined ? {} : { hint: printable(error.hint) }),
          retryable: error.retryable,
        },
        { cause: error },
      );
    if (error instanceof UsageError) throw new UsageError(printable(error.message));
    throw error;
  }
}

/** How a server can be installed, as `search` lists it: `npm, oci, remote`. */
function kinds(server: ServerJson): string {
  const list = (server.packages ?? []).map((pkg) => text(pkg.registryType ?? "?"));
  if ((server.remotes ?? []).length > 0) list.push("remote");
  return [...new Set(list)].join(", ");
}

/**
 * `mcplex add NAME [--name KEY] [--env NAME=VALUE ...] [--config F] [--registry URL]`: finds the
 * server in the registry and writes its config entry (version pinned, sandboxed where this
 * build sandboxes), asking for the values it declares; secret ones go to the secret store.
 */
export async function addCommand(args: string[]): Promise<number> {
  const { values, positionals } = await parseCommandArgs(addDefinition, args, { allowPositionals: true });
  const [wanted, ...extra] = positionals;
  if (wanted === undefined || extra.length > 0)
    throw new UsageError(
      "usage: mcplex add NAME|CARD-URL|DOMAIN [--name KEY] [--env NAME=VALUE ...] [--config F] [--registry URL]",
    );
  const given = new Map<string, string>();
  for (const pair of values.env ?? []) {
    const at = pair.indexOf("=");
    if (at <= 0) throw new UsageError(`--env takes NAME=VALUE, not "${pair}"`);
    given.set(pair.slice(0, at), pair.slice(at + 1));
  }
  const card = cardTarget(wanted);
  if (card !== undefined) return printableErrors(() => addFromCards(card, given, values));
  const client = new RegistryClient(values.registry === undefined ? {} : { url: values.registry });
  return printableErrors(async () => add(await client.resolve(wanted), given, values, "the MCP Registry"));
}

/**
 * `mcplex add URL|DOMAIN`: the server of a Server Card, or every server a domain's AI Catalog
 * lists (the MCP draft SEP-2127), each added as a registry entry is; cards the catalog lists on
 * another origin are named, not read.
 */
async function addFromCards(
  url: string,
  given: Map<string, string>,
  values: { config?: string | undefined; name?: string | undefined },
): Promise<number> {
  const { servers, skipped } = await readServerCards(url);
  for (const { where, why } of skipped) console.error(printable(`mcplex: skipped ${where}: ${why}`));
  if (servers.length === 0) return EXIT.ok;
  if (servers.length > 1 && values.name !== undefined)
    throw new UsageError(
      `${url} lists ${servers.length} servers; --name names one: add each by its card's URL`,
    );
  // Every card is checked (its entry's form, its key) before the first is written: a refused
  // card leaves the file as it was.
  const keys = new Set<string>();
  for (const { server } of servers) {
    // Built once with a stand-in for every input: what the filled-in entry would refuse.
    planEntry(server, { hasProgram: () => false }).build(() => "x");
    const key = keyOf(server, values.name);
    if (keys.has(key))
      throw new UsageError(`${url} lists two servers named ${key}; add each by its card's URL with --name`);
    keys.add(key);
  }
  for (const { server, from } of servers)
    await add(
      server,
      servers.length > 1 ? declared(server, given) : given,
      values,
      `the Server Card ${from}`,
    );
  return EXIT.ok;
}

/** The server's name in the config: `--name`, else the last part of its name, made a key. */
function keyOf(server: ServerJson, name: string | undefined): string {
  const key =
    name ??
    server.name
      .split("/")
      .pop()!
      .replace(/[^A-Za-z0-9_.-]/g, "-");
  if (!SERVER_NAME.test(key))
    throw new UsageError(
      `"${key}" cannot name a server; pass --name with letters, digits, _ . - (64 at most)`,
    );
  return key;
}

/** Of the values given, those a server's card asks for (one `--env` may serve several servers). */
function declared(server: ServerJson, given: Map<string, string>): Map<string, string> {
  const inputs = planEntry(server, { hasProgram: () => false }).inputs.map((input) => input.name);
  return new Map([...given].filter(([name]) => inputs.includes(name)));
}

async function add(
  server: ServerJson,
  given: Map<string, string>,
  values: { config?: string | undefined; name?: string | undefined },
  from: string,
): Promise<number> {
  const plan = planEntry(server, { hasProgram: (name) => hasProgram(name) });
  const key = keyOf(server, values.name);
  console.error(
    printable(
      `found ${server.name} ${text(server.version)}${server.description ? `: ${text(server.description)}` : ""}`,
    ),
  );
  console.error(`  runs as ${printable(plan.source)}`);

  const unknown = [...given.keys()].filter((name) => !plan.inputs.some((input) => input.name === name));
  if (unknown.length > 0) {
    const known = plan.inputs.map((input) => input.name).join(", ") || "none";
    throw new UsageError(`${server.name} declares no input ${unknown.join(", ")}; it declares: ${known}`);
  }
  // What the user gives (--env, the prompt) is theirs, written as typed; a default is the
  // registry's text, written so that it loads back as itself.
  const answers = new Map<EntryInput, { value: string; user: boolean }>();
  const missing: EntryInput[] = [];
  const interactive = process.stdin.isTTY === true && process.stderr.isTTY === true;
  for (const input of plan.inputs) {
    let value = given.get(input.name);
    if (value === undefined && interactive) value = (await ask(input)) || undefined;
    if (value !== undefined) answers.set(input, { value, user: true });
    else if (input.default !== undefined) answers.set(input, { value: input.default, user: false });
    else if (input.required) missing.push(input);
  }
  if (missing.length > 0) {
    const list = missing.map((input) => `${input.name}${input.description ? ` (${input.description})` : ""}`);
    throw new UsageError(
      `${server.name} needs ${list.join(", ")}; pass ${missing.map((input) => `--env ${input.name}=...`).join(" ")}`,
    );
  }
  // The entry is made, and checked, before a secret is stored or the file touched: a refused
  // entry leaves both as they were.
  const entry = plan.build((input): InputText | undefined => {
    const answer = answers.get(input);
    if (answer === undefined) return undefined;
    if (input.secret) return `\${secret:${secretName(key, input)}}`;
    return answer.user ? answer.value : { literal: answer.value };
  });
  const secrets = [...answers].filter(([input]) => input.secret);
  if (secrets.length > 0) {
    const store = new SecretStore();
    for (const [input, answer] of secrets) await store.set(secretName(key, input), answer.value);
    console.error(`  stored ${secrets.map(([input]) => secretName(key, input)).join(", ")} in ${store.file}`);
  }
  const file =
    values.config === undefined
      ? ((await resolveConfigPath({ cwd: process.cwd() })) ?? resolve("mcplex.yaml"))
      : resolve(values.config);
  // The sandbox key exists once this build has the sandbox (issue 27, part 1); until then the
  // entry is written without it rather than with a key `config check` refuses.
  const sandbox = plan.stdio && MCPLEX_SERVER_KEYS.includes("sandbox");
  const added = await addServerEntry(
    file,
    key,
    (map) => {
      if (map === "mcpServers") {
        const { transport, ...rest } = entry;
        return transport === undefined ? rest : { type: transport, ...rest };
      }
      return sandbox ? { ...entry, sandbox: true } : entry;
    },
    {
      comment: printable(
        `${server.name}${plan.version === undefined ? "" : ` ${plan.version}`}, from ${from}`,
      ),
    },
  );
  console.error(
    `added ${key} to ${file}${added.created ? " (created)" : ""}; check it with: mcplex config check`,
  );
  return EXIT.ok;
}

/**
 * Where a secret input is kept: `SERVER.NAME`, so two servers' `API_KEY`s stay apart; spelled
 * as a secret name must be (a server name may start with a digit, a header hold any character).
 */
function secretName(key: string, input: EntryInput): string {
  const name = `${key}.${input.name}`.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 127);
  return /^[A-Za-z_]/.test(name) ? name : `_${name}`;
}

/** Asks for one input on the terminal; a secret is not echoed. */
async function ask(input: EntryInput): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) process.stderr.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  try {
    const about = [input.description, input.default === undefined ? "" : `default ${input.default}`]
      .filter(Boolean)
      .join("; ");
    const question = rl.question(
      printable(`${input.name}${about ? ` (${about})` : ""}${input.secret ? " [secret]" : ""}: `),
    );
    muted = input.secret;
    const answer = await question;
    if (input.secret) process.stderr.write("\n");
    return answer;
  } finally {
    rl.close();
  }
}
