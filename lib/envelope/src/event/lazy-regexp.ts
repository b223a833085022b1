// A regular expression made on first use. V8 checks the syntax of every regex literal when it parses the
// script that holds it, used or not, and checking a Unicode property class such as `\p{L}` builds its
// Unicode tables: about 5 million instructions for the session-id grammar (callgrind; `node -e 0` runs
// about 85 million), paid by every process that loads the module. A pattern made from its source is
// checked only when it is made.
export function lazyRegExp(source: string, flags: string): () => RegExp {
  let made: RegExp | undefined;
  return () => (made ??= new RegExp(source, flags));
}
