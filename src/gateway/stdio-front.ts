import type { Readable, Writable } from "node:stream";
import { coalescingWriter, LineSplitter } from "../upstream/newline-framing.js";
import type { ClientSession } from "./client-session.js";
import type { Gateway } from "./gateway.js";
import { parseErrorAnswer } from "./protocol.js";

/** Options of {@link serveGatewayStdio}. */
export interface StdioFrontOptions {
  input?: Readable;
  output?: Writable;
  profile?: string;
  /** Largest accepted message in bytes. Default 4 MiB. */
  maxMessageBytes?: number;
}

/**
 * Serves the gateway over stdio (newline-delimited JSON-RPC) for clients that spawn
 * their servers. Resolves when the input ends; the session is then closed.
 */
export function serveGatewayStdio(
  gateway: Gateway,
  options: StdioFrontOptions = {},
): { session: ClientSession; done: Promise<void> } {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const max = options.maxMessageBytes ?? 4 * 1024 * 1024;
  const write = coalescingWriter(output);
  const session = gateway.openSession(
    {
      send(message) {
        write(`${JSON.stringify(message)}\n`);
      },
      close() {},
    },
    options.profile === undefined ? {} : { profile: options.profile },
  );

  const onLine = (line: string) => {
    if (line.trim() === "") return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch (error) {
      write(`${JSON.stringify(parseErrorAnswer(error))}\n`);
      return;
    }
    session.receive(message);
  };
  input.setEncoding?.("utf8");
  const lines = new LineSplitter(onLine, max, () =>
    write(
      `${JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message: `Invalid Request: message larger than ${max} bytes` } })}\n`,
    ),
  );
  input.on("data", (chunk: string) => lines.push(chunk));
  const done = new Promise<void>((resolve) => {
    let ending = false;
    // End of input: the client has said all it will, but answers still owed go out first.
    const end = () => {
      if (ending) return;
      ending = true;
      void session.idle().then(() => {
        session.close();
        resolve();
      });
    };
    input.once("end", end);
    input.once("close", end);
  });
  return { session, done };
}
