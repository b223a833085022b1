// Bundled in place of node:assert for yargs, which asks it only for strictEqual and notStrictEqual (checks
// of its own invariants, never of what a user typed): loading node:assert costs every start 1–3 ms.
function fail(message, fallback) {
  if (message instanceof Error) throw message;
  const err = new Error(message ?? fallback);
  err.code = "ERR_ASSERTION";
  throw err;
}

export function strictEqual(actual, expected, message) {
  if (!Object.is(actual, expected)) fail(message, "Expected values to be strictly equal");
}

export function notStrictEqual(actual, expected, message) {
  if (Object.is(actual, expected)) fail(message, "Expected values to be strictly unequal");
}
