/**
 * The QuickJS WebAssembly modules that runs live in.
 *
 * The release "sync" variant, not asyncify: with asyncify a host function that awaits suspends
 * the whole WebAssembly instance, so a script's tool calls would run one at a time. With the
 * sync variant a tool function returns a promise made in the sandbox, the host settles it when
 * the call answers and runs the sandbox's pending jobs, so `Promise.all` over tools really runs
 * the calls in parallel.
 *
 * Memory: QuickJS's own limit (`JS_SetMemoryLimit`) counts each allocation by
 * `malloc_usable_size`, which this Emscripten build lacks, so it only refuses single allocations
 * larger than the limit; a loop of 1 MB strings went to 880 MB under a 16 MiB limit. So each
 * module gets a WebAssembly memory of its own whose maximum is its start (16 MiB) plus the
 * run's `memoryBytes`: past it `malloc` fails and the script gets QuickJS's "out of memory".
 * Modules are kept per `memoryBytes` in each sandbox worker, which runs one script at a time, so
 * the cap is the run's own.
 *
 * One module serves many runs (loading one costs about 13 ms; a fresh runtime and context per
 * run about 0.6 ms). A module is dropped for a new one when a run ends with the host's own stack
 * exhausted (a deeply nested literal makes QuickJS's parser recurse on the host thread's stack
 * before its own stack check sees it) or with a WebAssembly trap: the instance's stack pointer
 * and allocator may be left anywhere, so no later run may use it.
 */
import releaseSync from "@jitl/quickjs-wasmfile-release-sync";
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSWASMModule } from "quickjs-emscripten-core";

/** The memory the build starts with (16 MiB, in 64 KiB pages); an imported memory must have at least this. */
const INITIAL_PAGES = 256;
const PAGE = 64 * 1024;

// This project's TypeScript lib setting has no WebAssembly types; Node has the global.
const { Memory } = (globalThis as unknown as { WebAssembly: { Memory: new (d: object) => object } })
  .WebAssembly;

const modules = new Map<number, { loading: Promise<QuickJSWASMModule>; module?: QuickJSWASMModule }>();

/** The module for runs of `memoryBytes`, loading one when there is none (or the last was dropped). */
export function quickjsModule(memoryBytes: number): Promise<QuickJSWASMModule> {
  const known = modules.get(memoryBytes);
  if (known !== undefined) return known.loading;
  const memory = new Memory({
    initial: INITIAL_PAGES,
    maximum: INITIAL_PAGES + Math.ceil(memoryBytes / PAGE),
  });
  // The variant's types read as CommonJS (`{ default: variant }`), its ESM build is the variant:
  // a promise of either is accepted.
  const entry: { loading: Promise<QuickJSWASMModule>; module?: QuickJSWASMModule } = {
    loading: Promise.resolve(releaseSync).then((base) =>
      newQuickJSWASMModuleFromVariant(newVariant(base as never, { wasmMemory: memory as never })),
    ),
  };
  entry.loading.then(
    (module) => {
      entry.module = module;
    },
    () => {
      if (modules.get(memoryBytes) === entry) modules.delete(memoryBytes);
    },
  );
  modules.set(memoryBytes, entry);
  return entry.loading;
}

/**
 * Whether `module`'s memory has used most of its room: when QuickJS cannot even allocate the
 * "out of memory" error it throws `null`, and this tells that apart from a script's `throw null`.
 * More than half, because a failing allocation that grows a structure asks for at most about
 * what it already holds.
 */
export function memoryExhausted(module: QuickJSWASMModule, memoryBytes: number): boolean {
  const size = (module.getWasmMemory() as unknown as { buffer: { byteLength: number } }).buffer.byteLength;
  return size - INITIAL_PAGES * PAGE >= memoryBytes / 2;
}

/** Stops handing out `module` (the next run loads a new one); runs already on it finish there. */
export function poisonModule(module: QuickJSWASMModule): void {
  for (const [key, entry] of modules) {
    if (entry.module !== module) continue;
    modules.delete(key);
  }
}
