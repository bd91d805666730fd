import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SecretStoreError } from "../../src/errors.js";
import {
  type SealedFileHeader,
  SealedFileStore,
  sealedFileHeader,
} from "../../src/storage/sealed-file-store.js";
import { openText, sealText } from "../../src/storage/sealed-text.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-sealed-store-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A small owner of a sealed file: named texts, each sealed apart. */
interface Notes extends SealedFileHeader {
  notes: Record<string, string>;
}

const BOUND = Buffer.from("notes");

function notesStore(env: Record<string, string> = {}, remember = false): SealedFileStore<Notes> {
  const file = join(dir, "home", "notes.json");
  const invalid = (problem: string) => new SecretStoreError("SECRET_STORE_INVALID", `notes ${problem}`);
  return new SealedFileStore<Notes>({
    file,
    keyFile: join(dir, "home", "secret.key"),
    env,
    noun: "notes file",
    maxBytes: 4096,
    remember,
    check: (data) => {
      const notes = data as Partial<Notes> | null;
      if (typeof notes?.notes !== "object" || typeof notes.check !== "string") throw invalid("is not notes");
      return notes as Notes;
    },
    invalid,
    unfit: (found) => invalid(`is ${found.kind}`),
    wrongKey: () => new SecretStoreError("SECRET_KEY_INVALID", "wrong key for the notes"),
  });
}

/** Adds a note, creating the file (and the key file) on the first one. */
async function addNote(store: SealedFileStore<Notes>, name: string, text: string): Promise<void> {
  await store.update(async (current) => {
    const { content, key } = current ?? {
      key: await store.newKey(),
      content: undefined,
    };
    const notes = { ...(content?.notes ?? {}), [name]: sealText(key.encryption, text, BOUND) };
    return { ...sealedFileHeader(key), notes };
  });
}

async function readNotes(store: SealedFileStore<Notes>): Promise<Record<string, string>> {
  const opened = await store.read();
  if (opened === undefined) return {};
  const { content, key } = opened;
  return Object.fromEntries(
    Object.entries(content.notes).map(([name, sealed]) => [name, openText(key.encryption, sealed, BOUND)]),
  );
}

describe("SealedFileStore", () => {
  it("creates the file and its key file mode 0600 in a 0700 directory, and reads it back", async () => {
    const store = notesStore();
    expect(await store.read()).toBeUndefined();
    await addNote(store, "a", "text-of-a-4f2e");
    expect(await readNotes(notesStore())).toEqual({ a: "text-of-a-4f2e" });
    expect((await stat(store.file)).mode & 0o777).toBe(0o600);
    expect((await stat(store.keyFile)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, "home"))).mode & 0o777).toBe(0o700);
    expect(await readFile(store.file, "utf8")).not.toContain("text-of-a-4f2e");
    expect((await readdir(join(dir, "home"))).sort()).toEqual(["notes.json", "secret.key"]);
  });

  it("writes nothing when the change returns undefined", async () => {
    const store = notesStore();
    await addNote(store, "a", "1");
    const before = await stat(store.file);
    await store.update(async () => undefined);
    const after = await stat(store.file);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });

  it("loses no change of several holders writing at once", async () => {
    const env = { MCPLEX_SECRET_KEY: "a".repeat(64) };
    const holders = [notesStore(env), notesStore(env, true), notesStore(env)];
    await Promise.all(Array.from({ length: 12 }, (_, i) => addNote(holders[i % 3]!, `n${i}`, `text-${i}`)));
    const notes = await readNotes(notesStore(env));
    expect(Object.keys(notes).sort()).toEqual(Array.from({ length: 12 }, (_, i) => `n${i}`).sort());
  });

  it("reads a file another holder replaced, also when it remembers the last one", async () => {
    const remembering = notesStore({}, true);
    await addNote(remembering, "a", "1");
    expect(await readNotes(remembering)).toEqual({ a: "1" });
    await addNote(notesStore(), "b", "2");
    expect(await readNotes(remembering)).toEqual({ a: "1", b: "2" });
  });

  it("names the file, never a secret, when the key is missing or wrong", async () => {
    const store = notesStore({ MCPLEX_SECRET_KEY: "b".repeat(64) });
    await addNote(store, "a", "1");
    const missing = await notesStore()
      .read()
      .catch((e: unknown) => e as SecretStoreError);
    expect(missing).toMatchObject({
      code: "SECRET_KEY_INVALID",
      message: `no key to open notes file ${store.file}`,
      hint: `set MCPLEX_SECRET_KEY, or restore the key file ${store.keyFile}`,
    });
    const wrong = await notesStore({ MCPLEX_SECRET_KEY: "c".repeat(64) })
      .read()
      .catch((e: unknown) => e as SecretStoreError);
    expect(wrong).toMatchObject({ code: "SECRET_KEY_INVALID", message: "wrong key for the notes" });
    expect(JSON.stringify(wrong)).not.toContain("b".repeat(64));
  });

  it("refuses a damaged file with the owner's error", async () => {
    const store = notesStore();
    await addNote(store, "a", "1");
    await writeFile(store.file, '{"notes":');
    await expect(store.read()).rejects.toMatchObject({
      code: "SECRET_STORE_INVALID",
      message: "notes is truncated or not a mcplex notes file",
    });
    await writeFile(store.file, JSON.stringify({ notes: {} }));
    await expect(store.read()).rejects.toMatchObject({ message: "notes is not notes" });
    await writeFile(store.file, "x".repeat(5000));
    await expect(store.read()).rejects.toMatchObject({ message: "notes is too-large" });
  });
});
