// A stream a job reads stops the moment its command is interrupted (cli.md: Ctrl-C rolls back).

/**
 * Iterate `source`, stopping with the signal's reason as soon as it aborts (even mid-wait). Each wait
 * gets its own abort listener, removed when the item arrives, so nothing accumulates per item.
 */
export async function* abortable<T>(source: AsyncIterable<T>, signal: AbortSignal | undefined): AsyncGenerator<T> {
  if (signal === undefined) {
    yield* source;
    return;
  }
  const it = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      signal.throwIfAborted();
      const next = await new Promise<IteratorResult<T>>((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        signal.addEventListener("abort", onAbort, { once: true });
        it.next().then(
          (r) => {
            signal.removeEventListener("abort", onAbort);
            resolve(r);
          },
          (e) => {
            signal.removeEventListener("abort", onAbort);
            reject(e);
          },
        );
      });
      if (next.done) return;
      yield next.value;
    }
  } finally {
    void it.return?.();
  }
}
