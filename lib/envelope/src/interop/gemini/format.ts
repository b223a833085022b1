// docs/gemini-opencode-interop.md §1: a Gemini CLI session file. The JSONL upsert log (line 1 metadata,
// then messages re-appended whole when they change, `$set` patches, `$rewindTo` cuts) and the legacy
// whole-file JSON object. Only complete lines are read: a last line without `\n` is pending (Gemini may be
// writing it) and the next import reads it.
import { isUtf8 } from "node:buffer";
import { readFileSync, statSync } from "node:fs";
import { isJsonObject, type JsonObject } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";

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
  lines: GeminiLine[];
  /** Metadata of line 1 (the legacy object without `messages`). */
  metadata: JsonObject;
  /** A legacy file's messages (the JSONL form has them as lines). */
  legacyMessages: JsonObject[];
  pendingTail: boolean;
  skippedLines: number[];
}

export type GeminiSessionReason = "unreadable_file" | "missing_metadata" | "malformed_line" | "invalid_record" | "duplicate_session_id";

export function invalidGeminiSession(reason: GeminiSessionReason, line: number | null, file: string, extra: JsonObject = {}): PixirError {
  return new PixirError("invalid_gemini_session", undefined, { reason, line, file, ...extra });
}

/** A missing file is not_found; anything else unreadable is unreadable_file (permission errors keep their kind). */
export function readGeminiFile(abs: string, file: string): Buffer {
  try {
    if (statSync(abs).isDirectory()) throw invalidGeminiSession("unreadable_file", null, file);
    return readFileSync(abs);
  } catch (err) {
    if (err instanceof PixirError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new PixirError("not_found", "Gemini CLI session file was not found", { path: file, next_actions: ["check the path", "set GEMINI_CLI_HOME or pass the chats directory"] });
    if (code === "EACCES" || code === "EPERM") throw new PixirError("permission_denied", undefined, { path: file });
    throw invalidGeminiSession("unreadable_file", null, file);
  }
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
    metadata,
    legacyMessages,
    pendingTail: false,
    skippedLines: [],
  };
}

/** Parse a session file. A legacy `.json` file (or one whose line 1 is not a JSON object) is read whole. */
export function parseGeminiFile(bytes: Buffer, options: ParseOptions): ParsedGeminiFile {
  const firstNl = bytes.indexOf(0x0a);
  const firstText = bytes.subarray(0, firstNl === -1 ? bytes.length : firstNl).toString("utf8");
  const firstOk = tryParse(firstText);
  if (options.file.endsWith(".json") || (!firstOk.ok && tryParse(bytes.toString("utf8")).ok)) return parseLegacy(bytes, options);

  const lines: GeminiLine[] = [];
  const skippedLines: number[] = [];
  let start = 0;
  let lineNo = 0;
  while (start < bytes.length) {
    const end = bytes.indexOf(0x0a, start);
    if (end === -1) break; // pending tail
    lineNo++;
    const slice = bytes.subarray(start, end);
    start = end + 1;
    const raw = slice.toString("utf8");
    if (isBlank(raw) && isUtf8(slice)) continue;
    lines.push(parseLine(slice, raw, lineNo, lines.length === 0, options, skippedLines));
  }
  const pendingTail = start < bytes.length;
  const first = lines[0];
  if (first === undefined || first.kind !== "metadata") throw invalidGeminiSession("missing_metadata", first?.line ?? 1, options.file);
  return { legacy: false, lines, metadata: first.record!, legacyMessages: [], pendingTail, skippedLines };
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

