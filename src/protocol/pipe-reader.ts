import { fstatSync } from "node:fs";
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
 * Reads file descriptor `fd` below Node's Readable, when it is a pipe or a socket: a `net.Socket`
 * with the `onread` option, which reads into one buffer for every read and hands each read to
 * `onBytes` with no stream on the way. Through a Readable, each read was a 64 KiB buffer
 * allocated and freed, a chunk pushed and decoded, a `data` event and a `nextTick` (callgrind:
 * about 6k instructions a read, with the collections the buffers caused). Returns `undefined`
 * for anything else (a file, a terminal), which the caller reads as a stream.
 *
 * The socket pauses and resumes as any (`pause()` stops reading, `resume()` starts again) and
 * ends with `end` and `close`. Nothing else may read `fd` meanwhile (`process.stdin` among them).
 */
export function readFd(fd: number, onBytes: OnBytes): Socket | undefined {
  try {
    const stat = fstatSync(fd);
    if (!stat.isFIFO() && !stat.isSocket()) return undefined;
  } catch {
    return undefined;
  }
  const options: ReaderOptions = { fd, readable: true, writable: false, onread: reader(onBytes) };
  return new Socket(options);
}

/**
 * Reads the pipe behind `stream` (a child process's `stdout`) as {@link readFd} does, taking its
 * libuv handle from the socket Node made for it: `child_process` gives no way to spawn with the
 * `onread` option. What the stream had read already goes to `onBytes` first; the stream itself
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
