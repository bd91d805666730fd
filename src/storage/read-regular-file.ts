import { constants } from "node:fs";
import { open } from "node:fs/promises";

/** What {@link readRegularFile} found at a path. */
export type RegularFileRead =
  | { kind: "missing" }
  | { kind: "not-regular" }
  | { kind: "too-large"; size: number }
  | { kind: "read"; text: string; mode: number };

/**
 * Reads a small file that must be a regular file (a store, a key). The path is opened without
 * blocking and checked on the open handle before reading, so a FIFO or a device put there
 * cannot hang the reader, and swapping the file between a check and the read changes nothing.
 * Errors other than a missing file are thrown as they are.
 */
export async function readRegularFile(path: string, maxBytes: number): Promise<RegularFileRead> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    // O_NONBLOCK is absent on Windows, where FIFOs cannot sit at a file path anyway.
    handle = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { kind: "missing" };
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return { kind: "not-regular" };
    if (stats.size > maxBytes) return { kind: "too-large", size: stats.size };
    return { kind: "read", text: await handle.readFile("utf8"), mode: stats.mode };
  } finally {
    await handle.close();
  }
}
