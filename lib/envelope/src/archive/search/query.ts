// archive.md §2: the query language. Words must all match (AND), `"a phrase"` matches in order, `-word`
// excludes, `word*` is a prefix. Matching is case-insensitive and does not depend on punctuation: a word
// is its pieces (letters, digits) in order, so `parse_line`, `src/lib` and `0x1F` match inside code and
// paths. Every word is handed to the engine as a quoted phrase, never read as the engine's syntax.
import { PixirError } from "../../event/errors.js";
import { lazyRegExp } from "../../event/lazy-regexp.js";

/**
 * The pieces the index splits text into: runs of letters, digits and marks (SQLite's unicode61 tokenizer;
 * everything else separates). A query word is found where its pieces stand in the same order, whatever
 * punctuation lies between them, the last piece as a prefix: `parse_line` finds `parse_line()` and
 * `parse-lines`, `src/lib` finds `/home/me/src/lib/x.ts`.
 */
const PIECE = lazyRegExp(String.raw`[\p{L}\p{N}\p{M}\p{Co}]+`, "gu");

/**
 * Characters of scripts written without spaces between words (Han, kana, Hangul, and the kana's
 * prolonged sound mark): each is a piece of its own, so a word inside a run of them is found (`最新` in
 * `ファイルを最新の状態に`), as it would be between spaces in other scripts. Their blocks as plain code
 * unit ranges (Hangul Jamo, CJK radicals to the unified ideographs with kana between, Hangul syllables,
 * compatibility ideographs, halfwidth katakana, and the supplementary ideographs as surrogate pairs):
 * tested on every indexed text, this is about 8× faster than Unicode script properties. The CJK
 * punctuation inside the ranges separates pieces either way.
 */
const UNSPACED_SOURCE = "[\\u1100-\\u11FF\\u2E80-\\u9FFF\\uA960-\\uA97F\\uAC00-\\uD7AF\\uF900-\\uFAFF\\uFF66-\\uFF9F]|[\\uD840-\\uD8BF][\\uDC00-\\uDFFF]";
const UNSPACED = new RegExp(UNSPACED_SOURCE);
const UNSPACED_ALL = new RegExp(UNSPACED_SOURCE, "g");

/**
 * PIECE within ASCII: no ASCII character is a mark, a private-use character or of an unspaced script.
 * Most queries are ASCII, and compiling PIECE's Unicode classes for a first match is about 11 million
 * instructions (callgrind; `node -e 0` runs about 85 million): a search of an ASCII word never makes it.
 */
const ASCII_PIECE = /[A-Za-z0-9]+/g;
const ASCII = /^[\x00-\x7f]*$/;

export const piecesOf = (term: string): string[] => {
  if (ASCII.test(term)) return term.match(ASCII_PIECE) ?? [];
  return (term.match(PIECE()) ?? []).flatMap((p) => (UNSPACED.test(p) ? p.replace(UNSPACED_ALL, " $& ").trim().split(/ +/) : [p]));
};

/** The text as the index is given it: each unspaced-script character stands apart, as piecesOf splits a query. */
export const indexedText = (text: string): string => (UNSPACED.test(text) ? text.replace(UNSPACED_ALL, " $& ") : text);

export interface ParsedQuery {
  /** The words and phrases that must occur, as typed (without quotes, `-` or a final `*`). */
  include: string[];
  /** The words and phrases that must not occur. */
  exclude: string[];
}

function usage(message: string, reason: string): PixirError {
  return new PixirError("usage", `${message}`, { field: "query", reason });
}

/** Split the query into terms: quoted phrases, and words separated by whitespace. */
function* terms(query: string): Generator<{ text: string; negated: boolean; quoted: boolean }> {
  let i = 0;
  while (i < query.length) {
    while (i < query.length && /\s/.test(query[i])) i++;
    if (i >= query.length) return;
    let negated = false;
    if (query[i] === "-" && i + 1 < query.length && !/\s/.test(query[i + 1])) {
      negated = true;
      i++;
    }
    if (query[i] === '"') {
      const end = query.indexOf('"', i + 1);
      if (end < 0) throw usage('the query has an opening " without its closing "', "unbalanced_quote");
      yield { text: query.slice(i + 1, end), negated, quoted: true };
      i = end + 1;
      continue;
    }
    let j = i;
    while (j < query.length && !/\s/.test(query[j]) && query[j] !== '"') j++;
    yield { text: query.slice(i, j), negated, quoted: false };
    i = j;
  }
}

/** Parse the words of `pixir search QUERY…` (joined by spaces). An unusable query is a usage error in pixir's words. */
export function parseQuery(words: readonly string[]): ParsedQuery {
  const q: ParsedQuery = { include: [], exclude: [] };
  for (const t of terms(words.join(" "))) {
    let text = t.quoted ? t.text.replace(/\s+/g, " ").trim() : t.text;
    if (!t.quoted && text.length > 1 && text.endsWith("*")) text = text.replace(/\*+$/, "");
    if (text === "" || (!t.quoted && /^[-*]+$/.test(text))) {
      throw usage(t.quoted ? "the query has an empty phrase" : `the query has a lone "${t.text}" with no word`, "empty_term");
    }
    (t.negated ? q.exclude : q.include).push(text);
  }
  return q;
}

/** Whether the index can find this term: it has a letter or a digit (else it is checked on the Event's text). */
export const isIndexable = (term: string): boolean => piecesOf(term).length > 0;

/** An FTS5 phrase of the term's pieces, the last one a prefix: the engine reads nothing in it as syntax. */
export const ftsString = (term: string): string => `"${piecesOf(term).join(" ")}"*`;

/** The FTS5 expression that all indexable terms of `terms` match, or null when none is indexable. */
export function ftsAll(terms: readonly string[]): string | null {
  const parts = terms.filter(isIndexable).map(ftsString);
  return parts.length === 0 ? null : parts.join(" AND ");
}

/** The FTS5 expression that any indexable term of `terms` matches, or null. */
export function ftsAny(terms: readonly string[]): string | null {
  const parts = terms.filter(isIndexable).map(ftsString);
  return parts.length === 0 ? null : parts.join(" OR ");
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** What stands between two pieces of a term: anything but a piece's character. */
const NOT_PIECE = "[^\\p{L}\\p{N}\\p{M}\\p{Co}]";
/** NOT_PIECE within ASCII (as ASCII_PIECE is PIECE within ASCII). */
const NOT_ASCII_PIECE = "[^A-Za-z0-9]";

/**
 * What the index matches for a term, as a pattern on the text: its pieces in order, anything but a piece
 * between (nothing at all where a piece is an unspaced-script character).
 */
function termSource(term: string, notPiece: string): string {
  const pieces = piecesOf(term);
  if (pieces.length === 0) return escapeRegExp(term);
  let source = escapeRegExp(pieces[0]!);
  for (let i = 1; i < pieces.length; i++) {
    const apart = UNSPACED.test(pieces[i - 1]!) || UNSPACED.test(pieces[i]!) ? "*" : "+";
    source += `${notPiece}${apart}${escapeRegExp(pieces[i]!)}`;
  }
  return source;
}

/** Longest first, so that a phrase wins over its words. */
const longestFirst = (terms: readonly string[]): string[] => [...terms].sort((a, b) => b.length - a.length);

/** A case-insensitive pattern that finds any of the terms in a text (longest first, so a phrase wins over its words). */
export function termPattern(terms: readonly string[]): RegExp | null {
  if (terms.length === 0) return null;
  return new RegExp(longestFirst(terms).map((t) => termSource(t, NOT_PIECE)).join("|"), "giu");
}

/**
 * termPattern for each text of a search, made once: its ASCII twin for an ASCII text when every term is
 * ASCII. Within ASCII the two find the same matches (no ASCII character but a letter or a digit is a piece's,
 * and `i` folds ASCII letters as `iu` does), and the twin has no Unicode class: compiling termPattern's
 * for a first match is about a millisecond a term of two pieces or more, in a search of 20 hits.
 * Held to termPattern by lib/envelope/test/archive/search/snippet.test.ts.
 */
export function patternsOf(terms: readonly string[]): (text: string) => RegExp | null {
  if (terms.length === 0) return () => null;
  let unicode: RegExp | null = null;
  const ascii = terms.every((t) => ASCII.test(t)) ? new RegExp(longestFirst(terms).map((t) => termSource(t, NOT_ASCII_PIECE)).join("|"), "gi") : null;
  return (text) => (ascii !== null && ASCII.test(text) ? ascii : (unicode ??= termPattern(terms)));
}

/** Whether a text satisfies the terms the index could not check (those without a letter or digit). */
export function textMatches(text: string, q: ParsedQuery): boolean {
  const lower = text.toLowerCase();
  const has = (t: string) => lower.includes(t.toLowerCase());
  for (const t of q.include) if (!isIndexable(t) && !has(t)) return false;
  for (const t of q.exclude) if (!isIndexable(t) && has(t)) return false;
  return true;
}
