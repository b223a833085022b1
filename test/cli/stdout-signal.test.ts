// A command waiting for a full stdout pipe to drain ends at once on SIGTERM (docs/cli-contract.md, "A
// signal while stdout waits for its reader"): a wait the signal did not end, or output still queued at
// the end, would keep it alive as long as the reader sleeps. The reader is perl, which can stop reading.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { binPath, generateLog, tempDir } from "../support/cli.js";

const PERL = "/usr/bin/perl";

describe.skipIf(!existsSync(PERL) || process.platform === "win32")("a signal while stdout waits for its reader", () => {
  let ws: string;
  beforeAll(() => {
    ws = tempDir();
    generateLog(ws, "big", { bytes: "4MiB" });
  }, 60_000);

  it("pixir-log cat into a reader that stopped reading exits 130 on SIGTERM, not when the reader wakes", () => {
    // The reader takes 2 MiB, then stops reading for 6 s.
    const reader = `my ($n, $b) = (0); while ($n < ${2 << 20}) { my $r = sysread(STDIN, $b, 65536); last unless $r; $n += $r } sleep 6; while (sysread(STDIN, $b, 1 << 20)) {}`;
    const cat = [process.execPath, binPath("pixir-log"), "cat", "big", "--workspace", ws].map((a) => `'${a}'`).join(" ");
    const script = `${cat} > >(${PERL} -e '${reader}' > /dev/null 2>&1) & pid=$!; sleep 1.5; start=$(date +%s%N); kill -TERM $pid; wait $pid; rc=$?; echo "$rc $(( ($(date +%s%N) - start) / 1000000 ))"`;
    const r = spawnSync("bash", ["-c", script], { encoding: "utf8" });
    const [rc, ms] = r.stdout.trim().split(" ").map(Number);
    expect(rc).toBe(130);
    expect(ms).toBeLessThan(3000);
  }, 20_000);
});
