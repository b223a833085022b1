// A stage that writes a large output into a pipe asks for the pipe to hold 1 MiB (cli/pipe-size.ts,
// docs/performance.md). The reader here is perl, which reads the pipe's size with F_GETPIPE_SZ after
// 2 MiB have crossed it; the tool's own helper is perl too, so the test needs what the feature needs.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_PIPE_BYTES, pipeBytes } from "../lib/envelope/src/cli/pipe-size.js";
import { binPath, generateLog, run, tempDir } from "./support/cli.js";

const PERL = "/usr/bin/perl";
const onLinuxWithPerl = process.platform === "linux" && existsSync(PERL);

/** Reads `after` bytes of stdin, prints the pipe's size (F_GETPIPE_SZ = 1032), then drains the rest. */
const SIZE_READER = `my $n = 0; my $b; while ($n < ${2 << 20}) { my $r = sysread(STDIN, $b, 65536); last unless $r; $n += $r } select(undef, undef, undef, 0.3); print fcntl(STDIN, 1032, 0), "\\n"; while (sysread(STDIN, $b, 1 << 20)) {}`;

/** `pixir-log cat big` into the size reader; the pipe's size as the reader saw it. */
function pipeSizeSeenByReader(ws: string, env: Record<string, string> = {}): { size: number; catStatus: string } {
  const cat = [process.execPath, binPath("pixir-log"), "cat", "big", "--workspace", ws].map((a) => `'${a}'`).join(" ");
  const r = spawnSync("bash", ["-o", "pipefail", "-c", `${cat} | ${PERL} -e '${SIZE_READER}'`], { encoding: "utf8", env: { ...process.env, ...env } });
  return { size: Number(r.stdout.trim()), catStatus: `${r.status} ${r.stderr}` };
}

describe.skipIf(!onLinuxWithPerl)("stdout pipes of large outputs", () => {
  let ws: string;
  beforeAll(() => {
    ws = tempDir();
    generateLog(ws, "big", { bytes: "4MiB" });
  }, 60_000);

  it("a command that has written 1 MiB into a pipe has it enlarged to 1 MiB", () => {
    const seen = pipeSizeSeenByReader(ws);
    expect(seen.catStatus).toBe("0 ");
    expect(seen.size).toBe(DEFAULT_PIPE_BYTES);
  });

  it("PIXIR_PIPE_BYTES sets the size, and 0 leaves the pipe as the shell made it", () => {
    expect(pipeSizeSeenByReader(ws, { PIXIR_PIPE_BYTES: "262144" }).size).toBe(262144);
    expect(pipeSizeSeenByReader(ws, { PIXIR_PIPE_BYTES: "0" }).size).toBe(65536);
  });

  it.each([["", "enlarged"], ["0", "as it was"]])("PIXIR_PIPE_BYTES=%s (pipe %s): a command waiting on a full pipe still ends at once on SIGTERM", (bytes) => {
    // The reader takes 2 MiB (so the pipe was enlarged), then stops reading for 6 s. A helper that had
    // made our stdout blocking would leave us stuck in write(2) until then; a wait for the pipe to drain
    // that the signal did not end, or output still queued at the end, would keep us alive as long.
    const reader = `my ($n, $b) = (0); while ($n < ${2 << 20}) { my $r = sysread(STDIN, $b, 65536); last unless $r; $n += $r } sleep 6; while (sysread(STDIN, $b, 1 << 20)) {}`;
    const cat = [process.execPath, binPath("pixir-log"), "cat", "big", "--workspace", ws].map((a) => `'${a}'`).join(" ");
    const script = `${cat} > >(${PERL} -e '${reader}' > /dev/null 2>&1) & pid=$!; sleep 1.5; start=$(date +%s%N); kill -TERM $pid; wait $pid; rc=$?; echo "$rc $(( ($(date +%s%N) - start) / 1000000 ))"`;
    const r = spawnSync("bash", ["-c", script], { encoding: "utf8", env: { ...process.env, PIXIR_PIPE_BYTES: bytes } });
    const [rc, ms] = r.stdout.trim().split(" ").map(Number);
    expect(rc).toBe(130);
    expect(ms).toBeLessThan(3000);
  }, 20_000);

  it("a small output starts no helper: the pipe keeps its size", () => {
    const script = `'${process.execPath}' '${binPath("pixir-log")}' cat big --workspace '${ws}' --to-seq 3 | ${PERL} -e 'select(undef, undef, undef, 0.3); print fcntl(STDIN, 1032, 0), "\\n"; while (<STDIN>) {}'`;
    const r = spawnSync("bash", ["-c", script], { encoding: "utf8" });
    expect(Number(r.stdout.trim())).toBe(65536);
  });
});

describe("PIXIR_PIPE_BYTES", () => {
  it("takes 0, or a byte count from one page up; empty or unset is the default", () => {
    expect(pipeBytes({})).toBe(DEFAULT_PIPE_BYTES);
    expect(pipeBytes({ PIXIR_PIPE_BYTES: "" })).toBe(DEFAULT_PIPE_BYTES);
    expect(pipeBytes({ PIXIR_PIPE_BYTES: "0" })).toBe(0);
    expect(pipeBytes({ PIXIR_PIPE_BYTES: "4096" })).toBe(4096);
    expect(pipeBytes({ PIXIR_PIPE_BYTES: "2147483647" })).toBe(2147483647);
    for (const bad of ["-1", "4095", "1e6", "0x1000", " 4096", "01", "2147483648", "one"]) {
      expect(() => pipeBytes({ PIXIR_PIPE_BYTES: bad }), bad).toThrow(expect.objectContaining({ kind: "invalid_args" }));
    }
  });

  it("a bad value is a usage problem of every command: exit 2, invalid_args naming the variable", () => {
    const ws = tempDir();
    const r = run("pixir-log", ["ls", "--json"], { cwd: ws, env: { PIXIR_PIPE_BYTES: "lots" } });
    expect(r.code).toBe(2);
    expect(r.json.error.kind).toBe("invalid_args");
    expect(r.json.error.details.field).toBe("PIXIR_PIPE_BYTES");
  });
});
