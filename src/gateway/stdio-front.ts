import type { Readable, Writable } from "node:stream";
import type { ClientSession } from "./client-session.js";
import type { Gateway } from "./gateway.js";

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
  let corked = false;
  const uncork = () => {
    corked = false;
    output.uncork();
  };
  const session = gateway.openSession(
    {
      send(message) {
        // Answers of one tick go out in one write.
        if (!corked) {
          corked = true;
          output.cork();
          process.nextTick(uncork);
        }
        output.write(`${JSON.stringify(message)}\n`);
      },
      close() {},
    },
    options.profile === undefined ? {} : { profile: options.profile },
  );

  let buffer = "";
  let skipping = false;
  const onLine = (line: string) => {
    if (line.trim() === "") return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch (error) {
      output.write(
        `${JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: `Parse error: ${(error as Error).message}` } })}\n`,
      );
      return;
    }
    session.receive(message);
  };
  input.setEncoding?.("utf8");
  input.on("data", (chunk: string) => {
    let text = buffer + chunk;
    let newline = text.indexOf("\n");
    let start = 0;
    while (newline !== -1) {
      if (skipping) skipping = false;
      else onLine(text.slice(start, newline));
      start = newline + 1;
      newline = text.indexOf("\n", start);
    }
    text = start === 0 ? text : text.slice(start);
    if (text.length > max) {
      // Drop the oversized message up to its end, and say so once.
      output.write(
        `${JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message: `Invalid Request: message larger than ${max} bytes` } })}\n`,
      );
      text = "";
      skipping = true;
    }
    buffer = text;
  });
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
