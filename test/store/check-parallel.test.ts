// The checking pass of a large Log runs in ranges, the later ones on worker threads (log-read.ts
// scanBytes). Whatever the number of threads, readers print the same bytes and refuse the same Logs
// with the same error, naming the line in the whole file. PIXIR_DEBUG=1 makes pixir-log cat say how many
// ranges the workers checked, so these tests know the workers did the work.
import { readFileSync, writeFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { generateLog, logFile, run, tempDir } from "../support/cli.js";

const THREADS = ["1", "2", "3"];

describe("pixir-log cat of a Log checked on several threads", () => {
  let ws: string;
  let original: string;
  beforeAll(() => {
    ws = tempDir();
    generateLog(ws, "big", { bytes: "3MiB" });
    original = readFileSync(logFile(ws, "big"), "utf8");
  }, 60_000);

  /** The Log with line `n` (1-based) replaced by `text`. */
  const withLine = (n: number, text: string): string => {
    const lines = original.split("\n");
    lines[n - 1] = text;
    return lines.join("\n");
  };
  const lineCount = () => original.split("\n").length - 1;

  it("prints the Log byte for byte, the workers checking all ranges but the first", () => {
    for (const threads of THREADS) {
      const r = run("pixir-log", ["cat", "big"], { cwd: ws, env: { PIXIR_SCAN_THREADS: threads, PIXIR_DEBUG: "1" } });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(original);
      expect(r.stderr).toBe(`pixir-log cat: checked ${threads} ranges; workers checked ${Number(threads) - 1}\n`);
    }
  });

  it("a corrupt line in the last range is the same error, naming its line in the file", () => {
    const bad = lineCount() - 3;
    writeFileSync(logFile(ws, "big"), withLine(bad, '{"id":"x","oops'));
    try {
      for (const threads of THREADS) {
        const r = run("pixir-log", ["cat", "big", "--json"], { cwd: ws, env: { PIXIR_SCAN_THREADS: threads } });
        expect(r.code).toBe(1);
        expect(r.stdout).toBe("");
        expect(r.errJson.error.details).toMatchObject({ reason: "invalid_json", line: bad, path: ".pixir/sessions/big.ndjson" });
      }
    } finally {
      writeFileSync(logFile(ws, "big"), original);
    }
  });

  it("a share header in a later range is misplaced_share_header; a seq going back is read in History order", () => {
    const late = lineCount() - 10;
    const header = JSON.parse(original.split("\n")[late - 1]!);
    const share = { ...header, type: "session_fork", data: { parent_session_id: "p", strategy: "share_v1" } };
    writeFileSync(logFile(ws, "big"), withLine(late, JSON.stringify(share)));
    try {
      for (const threads of THREADS) {
        const r = run("pixir-log", ["cat", "big", "--json"], { cwd: ws, env: { PIXIR_SCAN_THREADS: threads } });
        expect(r.code).toBe(1);
        expect(r.errJson.error.details).toMatchObject({ reason: "misplaced_share_header", line: late });
      }
      // The seq of a line past the middle, set below the seq of the line before the last range begins.
      const back = JSON.parse(original.split("\n")[late - 1]!);
      writeFileSync(logFile(ws, "big"), withLine(late, JSON.stringify({ ...back, seq: 5 })));
      const outputs = THREADS.map((threads) => run("pixir-log", ["cat", "big"], { cwd: ws, env: { PIXIR_SCAN_THREADS: threads } }));
      for (const r of outputs) expect(r.code, r.stderr).toBe(0);
      expect(outputs[1]!.stdout).toBe(outputs[0]!.stdout);
      expect(outputs[2]!.stdout).toBe(outputs[0]!.stdout);
      const seqs = outputs[0]!.lines.map((e) => e.seq);
      expect(seqs[6]).toBe(5);
      expect(seqs.slice(0, 12)).toEqual([0, 1, 2, 3, 4, 5, 5, 6, 7, 8, 9, 10]);
    } finally {
      writeFileSync(logFile(ws, "big"), original);
    }
  });
});
