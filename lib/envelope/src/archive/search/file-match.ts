// archive.md §2 `--file PATH`: the tool calls whose file argument is PATH, ends in `/PATH`, or lies below
// the directory PATH. The index keeps each argument path as its suffixes at its slashes (the whole path, and
// what follows each `/`), so that all three are lookups in one index: PATH itself among the whole paths,
// PATH among the other suffixes, and the suffixes that start with `PATH/`. A scan of every path with GLOBs
// was 12–13 ms of a search on the 1 GiB archive (docs/performance.md, "Round 12"); the GLOB rule is the
// twin these are held to (lib/envelope/test/archive/search/file-match.test.ts).

/** The rows `files` keeps for an argument path: the path whole, then what follows each of its slashes. */
export function fileRows(path: string): Array<{ suffix: string; whole: 0 | 1 }> {
  const rows: Array<{ suffix: string; whole: 0 | 1 }> = [{ suffix: path, whole: 1 }];
  for (let at = path.indexOf("/"); at !== -1; at = path.indexOf("/", at + 1)) rows.push({ suffix: path.slice(at + 1), whole: 0 });
  return rows;
}

/**
 * The condition on a search's Events for `--file PATH`, its parameters pushed. A trailing slash of PATH
 * names the same directory; the whole path is compared as given. `/` is followed by `0` in byte order, so
 * the suffixes that start with `PATH/` are those from `PATH/` up to `PATH0`.
 */
export function fileCondition(file: string, params: unknown[]): string {
  const p = file.replace(/\/+$/, "");
  params.push(file, p, `${p}/`, `${p}0`);
  return "d.doc IN (SELECT doc FROM files WHERE (suffix = ? AND whole = 1) OR (suffix = ? AND whole = 0) OR (suffix >= ? AND suffix < ?))";
}
