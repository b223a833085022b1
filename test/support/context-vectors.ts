// The test vectors of context-and-compaction.md, as the repository holds them (test/fixtures/context-vectors.json,
// made from the specification's context-vectors.md by scripts/vectors-to-json.mjs): each vector's Log, setup,
// command and expected output, exactly as the text states them. Pixir's own code produced those outputs.
import { readFileSync } from "node:fs";
import path from "node:path";
import { ROOT } from "./cli.js";

export const VECTORS_FILE = path.resolve(ROOT, "test/fixtures/context-vectors.json");
/** The specification's text, beside the checkout on the team's machines and in CI (absent in a bare clone). */
export const VECTORS_SPEC = path.resolve(ROOT, "../shared/spec/context-vectors.md");

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

/** Every vector, in the specification's order. */
export const readVectors = (file = VECTORS_FILE): Vector[] => JSON.parse(readFileSync(file, "utf8")) as Vector[];
