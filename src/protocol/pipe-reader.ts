import { type OnReadOpts, Socket, type SocketConstructorOpts } from "node:net";
import type { Readable } from "node:stream";

/** Bytes read at once: the one buffer each reader reads into, every time. */
const READ_BUFFER_BYTES = 64 * 1024;

/** Receives what one read gave: `buffer[0, length)`, valid until it returns (the buffer is reused). */
export type OnBytes = (buffer: Buffer, length: number) => void;

/** What a `net.Socket` keeps of its libuv stream (Node's own field; see {@link takeOverPipe}). */
interface StreamHandle {
  readStop(): number;
  useUserBuffer(buffer: Uint8Array): void;
  reading?: boolean;
}

/** The options `net.Socket` takes (`onread` as `socket.connect` documents it, and a handle). */
type ReaderOptions = SocketConstructorOpts & { onread: OnReadOpts; handle?: StreamHandle };

/**
 * Reads the pipe or socket behind `stream` (a child process's `stdout`, `process.stdin`) below
 * Node's Readable: a `net.Socket` with the `onread` option, which reads into one buffer for
 * every read and hands each read to `onBytes` with no stream on the way. Through a Readable,
 * each read was a 64 KiB buffer allocated and freed, a chunk pushed and decoded, a `data` event
 * and a `nextTick` (callgrind: about 6k instructions a read, with the collections the buffers
 * caused). The new socket pauses and resumes as any and ends with `end` and `close`.
 *
 * It takes the libuv handle of the socket Node made: `child_process` gives no way to spawn with
 * the `onread` option, and the stream `process.stdin` must stay the one owner of file
 * descriptor 0 (opening the descriptor again fails with EEXIST as soon as anything reads
 * `process.stdin`, which importing `node:process` as a module does). What the stream had read already goes to `onBytes` first; the stream itself
 * is destroyed once the new reader closes, so that the child's `close` event still comes.
 * Returns `undefined`, leaving the stream as it was, when it is not such a socket (any more).
 */
export function takeOverPipe(stream: Readable, onBytes: OnBytes): Socket | undefined {
  if (!(stream instanceof Socket) || stream.destroyed || stream.readableEnded) return undefined;
  const owner = stream as Socket & { _handle?: StreamHandle | null };
  const handle = owner._handle;
  if (typeof handle?.readStop !== "function" || typeof handle.useUserBuffer !== "function") return undefined;
  // What it read before it was taken over (a process spawned ahead may have written already).
  const before = stream.read() as Buffer | string | null;
  handle.readStop();
  handle.reading = false;
  owner._handle = null;
  const options: ReaderOptions = { handle, readable: true, writable: false, onread: reader(onBytes) };
  const taken = new Socket(options);
  if (before !== null) {
    const bytes = typeof before === "string" ? Buffer.from(before) : before;
    onBytes(bytes, bytes.length);
  }
  taken.once("close", () => stream.destroy());
  return taken;
}

function reader(onBytes: OnBytes): OnReadOpts {
  return {
    buffer: Buffer.allocUnsafe(READ_BUFFER_BYTES),
    callback: (length, buffer) => {
      onBytes(buffer as Buffer, length);
      return true;
    },
  };
}
