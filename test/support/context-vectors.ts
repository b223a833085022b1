// The test vectors of context-and-compaction.md, read from the specification itself
// (`../shared/spec/context-vectors.md`): each vector's Log, setup, command and expected output, exactly as
// the text states them. Their expected outputs were produced by Pixir's own code, not by ours.
import { readFileSync } from "node:fs";
import path from "node:path";
import { ROOT } from "./cli.js";

export const VECTORS_FILE = path.resolve(ROOT, "../shared/spec/context-vectors.md");

export interface Payload {
  /** Workspace-relative path. */
  path: string;
  bytes: string;
}

export interface CommandRow {
  args: string[];
  stdout: string;
  exit: number;
}

export interface Vector {
  id: string;
  title: string;
  /** The Log of Session `s`, one line per Event. */
  log: string[];
  payloads: Payload[];
  args: string[];
  expected: { format: "ndjson" | "text" | "json"; text: string } | null;
  /** `Text (without --json)`: the text output of the same command. */
  textForm: string | null;
  /** C02: the text of the recording and of the dry run, and the seq the checkpoint is recorded at. */
  recording: { text: string; dryRunText: string; seq: number } | null;
  /** C16: further commands with their exact stdout and exit status. */
  table: CommandRow[];
}

const splitArgs = (command: string): string[] => {
  const words = command.trim().split(/\s+/);
  if (words[0] !== "pixir") throw new Error(`not a pixir command: ${command}`);
  return words.slice(1);
};

function codeBlockAfter(section: string, marker: RegExp): { format: string; text: string } | null {
  const at = section.search(marker);
  if (at < 0) return null;
  const m = /```(\w+)\n([\s\S]*?)```/.exec(section.slice(at));
  return m === null ? null : { format: m[1]!, text: m[2]! };
}

/** Every vector of the file, in order. */
export function readVectors(file = VECTORS_FILE): Vector[] {
  const text = readFileSync(file, "utf8");
  const sections = text.split(/\n### /).slice(1);
  const byId = new Map<string, Vector>();
  const out: Vector[] = [];
  for (const section of sections) {
    const head = /^([FC]\d+b?)\. (.*)/.exec(section);
    if (head === null) continue;
    const id = head[1]!;
    const body = section.split(/\n## /)[0]!;
    let log: string[];
    const own = codeBlockAfter(body, /\nLog `s`/);
    const as = /\nLog: as (\w+)\./.exec(body);
    const plus = /\nLog: the (\w+) Log, plus the \1 `event` recorded at seq (\d+) \(id `(\w+)`\)\./.exec(body);
    if (own !== null) log = own.text.split("\n").filter((l) => l !== "");
    else if (as !== null) log = byId.get(as[1]!)!.log;
    else if (plus !== null) {
      const base = byId.get(plus[1]!)!;
      const event = JSON.parse(base.expected!.text).event;
      const line = { data: event, id: plus[3], seq: Number(plus[2]), session_id: "s", ts: "2026-07-05T00:00:00Z", type: "history_compaction" };
      log = [...base.log, JSON.stringify(line)];
    } else throw new Error(`vector ${id}: no Log`);

    let payloads: Payload[] = [];
    const file = /\nSetup: the file `<WS>\/([^`]+)` holds the \d+ bytes `([^`]*)`\./.exec(body);
    const same = /\nSetup: the same payload as (\w+)\./.exec(body);
    if (file !== null) payloads = [{ path: file[1]!, bytes: file[2]! }];
    else if (same !== null) payloads = byId.get(same[1]!)!.payloads;

    const command = /\nCommand: `([^`]+)`/.exec(body);
    const expected = codeBlockAfter(body, /\nExpected stdout/);
    const textForm = /\nText \(without `--json`\): `([^`]+)`/.exec(body);
    const recording = /The text form is `([^`]+)`; the dry-run text is `([^`]+)`/.exec(body);
    const recordedSeq = /"compaction_seq":(\d+)/.exec(body);
    const table: CommandRow[] = [];
    for (const row of body.matchAll(/^\| `(pixir [^`]+)`[^|]*\| `([^`]+)` \| (\d+) \|$/gm)) {
      table.push({ args: splitArgs(row[1]!), stdout: row[2]!, exit: Number(row[3]) });
    }
    const vector: Vector = {
      id,
      title: head[2]!,
      log,
      payloads,
      args: command === null ? [] : splitArgs(command[1]!),
      expected: expected === null ? null : { format: expected.format as "ndjson" | "text" | "json", text: expected.text },
      textForm: textForm === null ? null : textForm[1]!,
      recording: recording === null ? null : { text: recording[1]!, dryRunText: recording[2]!, seq: Number(recordedSeq![1]) },
      table,
    };
    byId.set(id, vector);
    out.push(vector);
  }
  return out;
}
