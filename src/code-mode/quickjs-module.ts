/**
 * The QuickJS WebAssembly module that every run's runtime lives in.
 *
 * The release "sync" variant, not asyncify: with asyncify a host function that awaits suspends
 * the whole WebAssembly instance, so a script's tool calls would run one at a time. With the
 * sync variant a tool function returns a promise made in the sandbox, the host settles it when
 * the call answers and runs the sandbox's pending jobs, so `Promise.all` over tools really runs
 * the calls in parallel.
 *
 * One module serves all runs (loading it costs about 13 ms; a fresh runtime and context per run
 * about 0.6 ms). A module is dropped for a new one when a run ends with the host's own stack
 * exhausted (a deeply nested literal makes QuickJS's parser recurse on the host thread's stack
 * before its own stack check sees it) or with a WebAssembly trap: the instance's stack pointer
 * and allocator may be left anywhere, so no later run may use it.
 */
import releaseSync from "@jitl/quickjs-wasmfile-release-sync";
import { newQuickJSWASMModuleFromVariant, type QuickJSWASMModule } from "quickjs-emscripten-core";

let current: Promise<QuickJSWASMModule> | undefined;
let loaded: QuickJSWASMModule | undefined;

/** The module in use, loading one when there is none (or the last one was dropped). */
export function quickjsModule(): Promise<QuickJSWASMModule> {
  if (current === undefined) {
    // Its types read as CommonJS (`{ default: variant }`), its ESM build is the variant: a promise
    // of either is accepted.
    const loading = newQuickJSWASMModuleFromVariant(Promise.resolve(releaseSync)).then((module) => {
      if (current === loading) loaded = module;
      return module;
    });
    loading.catch(() => {
      if (current === loading) current = undefined;
    });
    current = loading;
  }
  return current;
}

let dropped = 0;

/** Stops handing out `module` (the next run loads a new one); runs already on it finish there. */
export function poisonModule(module: QuickJSWASMModule): void {
  if (loaded !== module) return;
  dropped++;
  loaded = undefined;
  current = undefined;
}

/** How many modules were dropped since the process started (the hostile run reports it). */
export function droppedModules(): number {
  return dropped;
}
