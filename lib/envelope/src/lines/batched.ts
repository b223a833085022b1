// Output made of many small strings (lines, pieces of a document) written in fewer, larger writes.

/** Join small pieces into chunks of about `size` characters, in order. */
export function* batched(pieces: Iterable<string>, size = 64 * 1024): Generator<string> {
  let parts: string[] = [];
  let length = 0;
  for (const piece of pieces) {
    parts.push(piece);
    length += piece.length;
    if (length >= size) {
      yield parts.join("");
      parts = [];
      length = 0;
    }
  }
  if (parts.length > 0) yield parts.join("");
}
