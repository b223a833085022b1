#!/usr/bin/env node
// The test vectors of context-and-compaction.md (the specification's context-vectors.md) as a data file of
// the repository, test/fixtures/context-vectors.json, so the suite runs in a clone with nothing beside it:
// each vector's Log, setup, command and expected output, exactly as the text states them (Pixir's outputs).
//   node scripts/vectors-to-json.mjs [SPEC.md]          write the JSON file from the specification
//   node scripts/vectors-to-json.mjs --check [SPEC.md]  exit 1 when the JSON file differs from the specification
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
export const VECTORS_JSON = path.join(root, "test/fixtures/context-vectors.json");
export const VECTORS_SPEC = path.resolve(root, "../shared/spec/context-vectors.md");

const splitArgs = (command) => {
  const words = command.trim().split(/\s+/);
  if (words[0] !== "pixir") throw new Error(`not a pixir command: ${command}`);
  return words.slice(1);
};

function codeBlockAfter(section, marker) {
  const at = section.search(marker);
  if (at < 0) return null;
  const m = /```(\w+)\n([\s\S]*?)```/.exec(section.slice(at));
  return m === null ? null : { format: m[1], text: m[2] };
}

function logOf(id, body, byId) {
  const own = codeBlockAfter(body, /\nLog `s`/);
  const as = /\nLog: as (\w+)\./.exec(body);
  const plus = /\nLog: the (\w+) Log, plus the \1 `event` recorded at seq (\d+) \(id `(\w+)`\)\./.exec(body);
  if (own !== null) return own.text.split("\n").filter((l) => l !== "");
  if (as !== null) return byId.get(as[1]).log;
  if (plus !== null) {
    const base = byId.get(plus[1]);
    const event = JSON.parse(base.expected.text).event;
    const line = { data: event, id: plus[3], seq: Number(plus[2]), session_id: "s", ts: "2026-07-05T00:00:00Z", type: "history_compaction" };
    return [...base.log, JSON.stringify(line)];
  }
  throw new Error(`vector ${id}: no Log`);
}

function payloadsOf(body, byId) {
  const file = /\nSetup: the file `<WS>\/([^`]+)` holds the \d+ bytes `([^`]*)`\./.exec(body);
  const same = /\nSetup: the same payload as (\w+)\./.exec(body);
  if (file !== null) return [{ path: file[1], bytes: file[2] }];
  if (same !== null) return byId.get(same[1]).payloads;
  return [];
}

/** Every vector of the specification's text, in order. */
export function vectorsOfMarkdown(text) {
  const byId = new Map();
  const out = [];
  for (const section of text.split(/\n### /).slice(1)) {
    const head = /^([FC]\d+b?)\. (.*)/.exec(section);
    if (head === null) continue;
    const id = head[1];
    const body = section.split(/\n## /)[0];
    const command = /\nCommand: `([^`]+)`/.exec(body);
    const expected = codeBlockAfter(body, /\nExpected stdout/);
    const textForm = /\nText \(without `--json`\): `([^`]+)`/.exec(body);
    const recording = /The text form is `([^`]+)`; the dry-run text is `([^`]+)`/.exec(body);
    const recordedSeq = /"compaction_seq":(\d+)/.exec(body);
    const table = [...body.matchAll(/^\| `(pixir [^`]+)`[^|]*\| `([^`]+)` \| (\d+) \|$/gm)].map((row) => ({ args: splitArgs(row[1]), stdout: row[2], exit: Number(row[3]) }));
    const vector = {
      id,
      title: head[2],
      log: logOf(id, body, byId),
      payloads: payloadsOf(body, byId),
      args: command === null ? [] : splitArgs(command[1]),
      expected: expected === null ? null : { format: expected.format, text: expected.text },
      textForm: textForm === null ? null : textForm[1],
      recording: recording === null ? null : { text: recording[1], dryRunText: recording[2], seq: Number(recordedSeq[1]) },
      table,
    };
    byId.set(id, vector);
    out.push(vector);
  }
  return out;
}

const jsonOf = (specFile) => `${JSON.stringify(vectorsOfMarkdown(readFileSync(specFile, "utf8")), null, 1)}\n`;

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const check = args[0] === "--check";
  const spec = path.resolve((check ? args[1] : args[0]) ?? VECTORS_SPEC);
  const json = jsonOf(spec);
  if (!check) writeFileSync(VECTORS_JSON, json);
  else if (readFileSync(VECTORS_JSON, "utf8") !== json) {
    process.stderr.write(`${path.relative(root, VECTORS_JSON)} differs from ${spec}: run node scripts/vectors-to-json.mjs\n`);
    process.exit(1);
  }
}
