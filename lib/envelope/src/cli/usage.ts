// Usage errors that say what was wrong (docs/cli-contract.md "Parsing"): an unknown command names the
// word and the nearest command, an unknown flag names the flag and the nearest flag. cli.md §1 forbids
// echoing the offending token; we echo only a word that cannot carry anything else: a lower-case command
// word (letters and dashes, so never a Session id with digits, dots or slashes, never a path or a control
// byte) or a long flag's name (never its value). Anything else is named by its kind alone.
import { PixirError, usageError } from "../event/errors.js";

const COMMAND_WORD = /^[a-z][a-z-]{0,23}$/;
const FLAG_NAME = /^--[a-z][a-z0-9-]{0,31}$/;

/** Optimal string alignment distance (Levenshtein with adjacent transpositions), for "did you mean". */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** The candidate nearest to `word` when one is near (at most 2 edits, and fewer than half its letters); else undefined. */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(word, c);
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return bestDistance <= 2 && bestDistance * 2 < Math.max(word.length, 2) ? best : undefined;
}

const suggestion = (near: string | undefined): string => (near === undefined ? "" : `; did you mean "${near}"?`);

/** `unknown command "forkk"; did you mean "fork"?` (`what` for a command's own words: `lock action`, `import format`). */
export function unknownWord(synopsis: string, word: string, known: readonly string[], what = "command"): PixirError {
  const shown = COMMAND_WORD.test(word) ? ` "${word}"` : "";
  return usageError(synopsis, `unknown ${what}${shown}${suggestion(nearest(word.toLowerCase(), known))}`);
}

/** `unknown flag --to-sq; did you mean --to-seq?`, from the token as typed (`--name` or `--name=value`). */
export function unknownFlag(synopsis: string, token: string, known: readonly string[]): PixirError {
  const name = token.includes("=") ? token.slice(0, token.indexOf("=")) : token;
  const shown = FLAG_NAME.test(name) ? ` ${name}` : "";
  const near = name.startsWith("--") ? nearest(name.slice(2).toLowerCase(), known) : undefined;
  return usageError(synopsis, `unknown flag${shown}${near === undefined ? "" : `; did you mean --${near}?`}`);
}
