// docs/gemini-opencode-interop.md §1: a Gemini CLI session file. The JSONL upsert log (line 1 metadata,
// then messages re-appended whole when they change, `$set` patches, `$rewindTo` cuts) and the legacy
// whole-file JSON object. Only complete lines are read: a last line without `\n` is pending (Gemini may be
// writing it) and the next import reads it. A JSONL file is read a line at a time as it is planned.
import { isUtf8 } from "node:buffer";
import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { isJsonObject, type JsonObject } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";
import { MAX_LINE_BYTES } from "../../lines/codec.js";
import { FileLines, sourceLineTooLong } from "../../lines/line-bound.js";

export type GeminiRecordKind = "metadata" | "message" | "set" | "rewind" | "other" | "malformed";

/** One source line (or, for a legacy file, the whole file as line 1). */
export interface GeminiLine {
  /** 1-based physical line number. */
  line: number;
  /** The exact text of the line without its `\n`; for a legacy file the whole file. */
  raw: string;
  kind: GeminiRecordKind;
  /** `raw` is base64: a line skipped by --lenient that is not UTF-8. */
  rawBase64?: true;
  /** The parsed record; null for a malformed line kept by --lenient. */
  record: JsonObject | null;
}

export interface ParsedGeminiFile {
  legacy: boolean;
  /** The lines, read from the file as they are iterated (once): only the line being planned is held. */
  lines: Iterable<GeminiLine>;
  /** The lines read so far (non-blank); with `pendingTail` and `skippedLines`, final once `lines` is done. */
  lineCount: number;
  /** Metadata of line 1 (the legacy object without `messages`). */
  metadata: JsonObject;
  /** A legacy file's messages (the JSONL form has them as lines). */
  legacyMessages: JsonObject[];
  pendingTail: boolean;
  skippedLines: number[];
  /** Let the file go (after the lines, or on an error while they are planned). */
  close(): void;
}

export type GeminiSessionReason = "unreadable_file" | "missing_metadata" | "malformed_line" | "invalid_record" | "duplicate_session_id";

export function invalidGeminiSession(reason: GeminiSessionReason, line: number | null, file: string, extra: JsonObject = {}): PixirError {
  return new PixirError("invalid_gemini_session", undefined, { reason, line, file, ...extra });
}

/** The error of a file that cannot be opened or read: missing is not_found, permission keeps its kind. */
function unreadable(err: unknown, file: string): PixirError {
  if (err instanceof PixirError) return err;
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return new PixirError("not_found", "Gemini CLI session file was not found", { path: file, next_actions: ["check the path", "set GEMINI_CLI_HOME or pass the chats directory"] });
  if (code === "EACCES" || code === "EPERM") return new PixirError("permission_denied", undefined, { path: file });
  return invalidGeminiSession("unreadable_file", null, file);
}

/** A line of a session file longer than a Log line may be (its raw text is kept in an Event): refused. */
const tooLong = (file: string) => (line: number) => sourceLineTooLong("session file", file, line);

/**
 * Open a session file to be planned line by line (null: an empty file). A legacy whole-file `.json` (or a
 * file whose first line is not JSON but whose whole text is) is read whole, up to MAX_LINE_BYTES: its text
 * is the raw of one Event, so a larger one is refused (`line_too_long`, line 1) before it is read.
 */
export function readGeminiSession(abs: string, file: string, lenient: boolean): ParsedGeminiFile | null {
  let fd: number;
  let size: number;
  try {
    if (statSync(abs).isDirectory()) throw invalidGeminiSession("unreadable_file", null, file);
    fd = openSync(abs, "r");
    size = fstatSync(fd).size;
  } catch (err) {
    throw unreadable(err, file);
  }
  let legacy: Buffer | null;
  try {
    legacy = size === 0 ? null : isLegacy(fd, file, size);
    if (size > 0 && legacy === null) return openJsonl(fd, file, lenient, size);
  } catch (err) {
    closeSync(fd);
    throw unreadable(err, file);
  }
  closeSync(fd);
  return legacy === null ? null : parseLegacy(legacy, { file, lenient });
}

/** The whole bytes of a legacy file, or null for a JSONL one (decided by the name, then by line 1). */
function isLegacy(fd: number, file: string, size: number): Buffer | null {
  const whole = (): Buffer => {
    if (size > MAX_LINE_BYTES) throw tooLong(file)(1);
    const bytes = Buffer.allocUnsafe(size);
    let got = 0;
    while (got < size) {
      const n = readSync(fd, bytes, got, size - got, got);
      if (n === 0) break;
      got += n;
    }
    return bytes.subarray(0, got);
  };
  if (file.endsWith(".json")) return whole();
  const first = new FileLines(fd, tooLong(file), MAX_LINE_BYTES, Math.min(size, 64 * 1024)).next();
  // No complete line: nothing to read yet (missing_metadata, as for a file of blank lines).
  if (first === null || tryParse(first.toString("utf8")).ok) return null;
  // Past the bound, a first line that opens an object is taken for a legacy file too large to keep.
  if (size > MAX_LINE_BYTES) return /^[ \t\r]*\{/.test(first.subarray(0, 64).toString("latin1")) ? whole() : null;
  const bytes = whole();
  return isUtf8(bytes) && tryParse(bytes.toString("utf8")).ok ? bytes : null;
}

/** A JSONL session file: line 1 (the metadata) read now, the rest as the lines are iterated. */
function openJsonl(fd: number, file: string, lenient: boolean, size: number): ParsedGeminiFile {
  // A block of the file's size (a file that grows meanwhile is read in more blocks), 1 MiB at most.
  const reader = new FileLines(fd, tooLong(file), MAX_LINE_BYTES, size + 1);
  const options = { file, lenient };
  const skippedLines: number[] = [];
  let first: GeminiLine | null = null;
  while (first === null) {
    const b = reader.next();
    if (b === null) break;
    const raw = b.toString("utf8");
    if (!(isBlank(raw) && isUtf8(b))) first = parseLine(b, raw, reader.line, true, options, skippedLines);
  }
  if (first === null || first.kind !== "metadata") throw invalidGeminiSession("missing_metadata", first?.line ?? 1, file);
  let closed = false;
  const parsed: ParsedGeminiFile = {
    legacy: false,
    lines: [],
    lineCount: 1,
    metadata: first.record!,
    legacyMessages: [],
    pendingTail: false,
    skippedLines,
    close: () => {
      if (!closed) closeSync(fd);
      closed = true;
    },
  };
  parsed.lines = (function* (): Generator<GeminiLine> {
    yield first;
    for (;;) {
      let b: Buffer | null;
      try {
        b = reader.next();
      } catch (err) {
        throw unreadable(err, file);
      }
      if (b === null) break;
      const raw = b.toString("utf8");
      if (isBlank(raw) && isUtf8(b)) continue;
      parsed.lineCount++;
      yield parseLine(b, raw, reader.line, false, options, skippedLines);
    }
    parsed.pendingTail = reader.tailBytes > 0;
  })();
  return parsed;
}

/** What a record is, by the keys Gemini's own loader looks at, in its order. */
export function recordKind(value: unknown, isFirst: boolean): GeminiRecordKind | null {
  if (!isJsonObject(value)) return null;
  if (isFirst) return typeof value.sessionId === "string" ? "metadata" : null;
  if (typeof value.$rewindTo === "string") return "rewind";
  if (typeof value.id === "string") return "message";
  if (isJsonObject(value.$set)) return "set";
  if (typeof value.sessionId === "string" && typeof value.projectHash === "string") return "metadata";
  return "other";
}

const isBlank = (text: string): boolean => /^[ \t\r]*$/.test(text);

function tryParse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

interface ParseOptions {
  file: string;
  lenient?: boolean;
}

/** The whole-file JSON object older Gemini CLI versions wrote (`session-*.json`). */
function parseLegacy(bytes: Buffer, options: ParseOptions): ParsedGeminiFile {
  const text = bytes.toString("utf8");
  const parsed = isUtf8(bytes) ? tryParse(text) : { ok: false as const };
  if (!parsed.ok || !isJsonObject(parsed.value) || typeof parsed.value.sessionId !== "string") {
    throw invalidGeminiSession("missing_metadata", 1, options.file);
  }
  const { messages, ...metadata } = parsed.value;
  const legacyMessages = Array.isArray(messages) ? messages.filter(isJsonObject) : [];
  return {
    legacy: true,
    lines: [{ line: 1, raw: text, kind: "metadata", record: parsed.value }],
    lineCount: 1,
    metadata,
    legacyMessages,
    pendingTail: false,
    skippedLines: [],
    close: () => undefined,
  };
}

function parseLine(slice: Buffer, raw: string, lineNo: number, isFirst: boolean, options: ParseOptions, skipped: number[]): GeminiLine {
  const parsed = isUtf8(slice) ? tryParse(raw) : { ok: false as const };
  if (!parsed.ok) {
    if (!options.lenient || isFirst) throw invalidGeminiSession(isFirst ? "missing_metadata" : "malformed_line", lineNo, options.file);
    skipped.push(lineNo);
    return isUtf8(slice)
      ? { line: lineNo, raw, kind: "malformed", record: null }
      : { line: lineNo, raw: slice.toString("base64"), rawBase64: true, kind: "malformed", record: null };
  }
  const kind = recordKind(parsed.value, isFirst);
  if (kind === null) {
    if (isFirst) throw invalidGeminiSession("missing_metadata", lineNo, options.file);
    if (!options.lenient) throw invalidGeminiSession("invalid_record", lineNo, options.file);
    skipped.push(lineNo);
    return { line: lineNo, raw, kind: "malformed", record: null };
  }
  return { line: lineNo, raw, kind, record: parsed.value as JsonObject };
}

