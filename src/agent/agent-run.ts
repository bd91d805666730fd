/**
 * The handle `runAgent` returns: an async iterable of events, a text-only view and the
 * final `done` event, all fed by one run that starts on first use.
 */
import type { AgentDoneEvent, AgentEvent } from "./agent-events.js";

/**
 * A running (or not yet started) agent conversation. Iterate it for every event, or
 * `textStream` for the answer text only; each iterator sees the run from its start.
 *
 * @example
 * const run = runAgent({ hub, llm, messages });
 * for await (const text of run.textStream) speak(text);
 * const { outcome, messages } = await run.result;
 */
export interface AgentRun extends AsyncIterable<AgentEvent> {
  /** Only the `text-delta` texts: what the model says, never its tool traffic. */
  readonly textStream: AsyncIterable<string>;
  /** The `done` event, once the run has ended (it never rejects). */
  readonly result: Promise<AgentDoneEvent>;
}

/** Emits one event to every reader of a run. */
export type EmitAgentEvent = (event: AgentEvent) => void;

/** Wraps a producer (which must end by emitting `done` and must not throw) as an {@link AgentRun}. */
export function createAgentRun(produce: (emit: EmitAgentEvent) => Promise<void>): AgentRun {
  const log: AgentEvent[] = [];
  let wake: Array<() => void> = [];
  let started = false;
  let ended = false;
  let resolveDone!: (event: AgentDoneEvent) => void;
  const result = new Promise<AgentDoneEvent>((resolve) => {
    resolveDone = resolve;
  });

  const emit: EmitAgentEvent = (event) => {
    if (ended) return;
    log.push(event);
    if (event.type === "done") {
      ended = true;
      resolveDone(event);
    }
    const waiting = wake;
    wake = [];
    for (const w of waiting) w();
  };

  const start = () => {
    if (started) return;
    started = true;
    // Deferred so that a caller can attach every reader before the first event.
    queueMicrotask(() => {
      produce(emit).catch((error: unknown) => {
        const err = error instanceof Error ? error : new Error(String(error));
        emit({ type: "error", step: 0, error: err, fatal: true });
        emit({
          type: "done",
          outcome: "error",
          steps: 0,
          usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
          messages: [],
          text: "",
          error: err,
        });
      });
    });
  };

  async function* events(): AsyncGenerator<AgentEvent, void, undefined> {
    start();
    let cursor = 0;
    while (true) {
      while (cursor < log.length) {
        const event = log[cursor++]!;
        yield event;
        if (event.type === "done") return;
      }
      await new Promise<void>((resolve) => wake.push(resolve));
    }
  }

  async function* texts(): AsyncGenerator<string, void, undefined> {
    for await (const event of events()) if (event.type === "text-delta") yield event.text;
  }

  return {
    [Symbol.asyncIterator]: events,
    textStream: { [Symbol.asyncIterator]: texts },
    get result() {
      start();
      return result;
    },
  };
}
