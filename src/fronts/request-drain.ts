/**
 * The requests a front is answering, for a graceful close: once draining, the front takes no
 * new ones, and {@link drain} resolves when the last one is answered (or the grace is over).
 * Long-lived streams leave the count when they become streams: they are not waited for.
 */
export class RequestDrain {
  #count = 0;
  #draining = false;
  #onIdle: (() => void) | undefined;

  /** `true` once {@link drain} was called: new requests are refused. */
  get draining(): boolean {
    return this.#draining;
  }

  /** Counts a request in; returns the function that counts it out (idempotent). */
  enter(): () => void {
    this.#count++;
    let counted = true;
    return () => {
      if (!counted) return;
      counted = false;
      this.#count--;
      if (this.#count === 0) this.#onIdle?.();
    };
  }

  /** Stops taking requests and waits for those in flight, at most `graceMs`. */
  async drain(graceMs: number): Promise<void> {
    this.#draining = true;
    if (this.#count === 0) return;
    await new Promise<void>((resolve) => {
      this.#onIdle = resolve;
      setTimeout(resolve, graceMs).unref();
    });
  }
}
