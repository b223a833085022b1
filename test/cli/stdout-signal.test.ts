// A command waiting for a full stdout pipe to drain ends at once on SIGTERM (docs/cli-contract.md, "A
// signal while stdout waits for its reader"): a wait the signal did not end, or output still queued at
// the end, would keep it alive as long as the reader sleeps. The reader is perl, which can stop reading.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { binPath, generateLog, logFile, tempDir } from "../support/cli.js";

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

// A process's own stdout that is a pipe, a socket or a file is written by its descriptor for its first 32 KiB
// (lib/envelope/src/cli/direct-stdout.ts), then by process.stdout: the bytes are the same, in order, and
// the exits the stream gives hold for it too.
describe.skipIf(!existsSync(PERL) || process.platform === "win32")("stdout written by its descriptor", () => {
  let ws: string;
  let log: Buffer;
  beforeAll(() => {
    ws = tempDir();
    generateLog(ws, "big", { bytes: "4MiB" });
    log = readFileSync(logFile(ws, "big"));
  }, 60_000);
  const cat = () => [process.execPath, binPath("pixir-log"), "cat", "big", "--workspace", ws].map((a) => `'${a}'`).join(" ");

  it("a reader that reads nothing at all: SIGTERM ends the run at once", () => {
    const script = `${cat()} > >(${PERL} -e 'sleep 6' > /dev/null 2>&1) & pid=$!; sleep 1.5; start=$(date +%s%N); kill -TERM $pid; wait $pid; rc=$?; echo "$rc $(( ($(date +%s%N) - start) / 1000000 ))"`;
    const r = spawnSync("bash", ["-c", script], { encoding: "utf8" });
    const [rc, ms] = r.stdout.trim().split(" ").map(Number);
    expect(rc).toBe(130);
    expect(ms).toBeLessThan(3000);
  }, 20_000);

  it("a pipe set non-blocking and already 48 KiB full, read late: every byte arrives, in order (the stream takes over at EAGAIN)", () => {
    // perl fills 48 KiB of the 64 KiB pipe, sets it non-blocking and becomes pixir-log: its first direct write fits in part.
    const prefix = `${"x".repeat(48 * 1024 - 1)}\n`;
    const nonBlocking = `${PERL} -MFcntl -e 'syswrite(STDOUT, "x" x ${48 * 1024 - 1} . "\\n") == ${48 * 1024} or die; fcntl(STDOUT, F_SETFL, fcntl(STDOUT, F_GETFL, 0) | O_NONBLOCK) or die; exec @ARGV'`;
    const slow = `${PERL} -e 'sleep 1; binmode STDOUT; while (sysread(STDIN, my $b, 65536)) { print $b }'`;
    const r = spawnSync("bash", ["-o", "pipefail", "-c", `${nonBlocking} ${cat()} | ${slow}`], { maxBuffer: 64 << 20 });
    expect(r.status).toBe(0);
    expect(r.stdout.equals(Buffer.concat([Buffer.from(prefix), log]))).toBe(true);
  }, 20_000);

  it("a file, a socket and a pipe get the Log byte for byte; a closed pipe is a quiet exit 0", () => {
    const file = path.join(tempDir(), "out.ndjson");
    expect(spawnSync("bash", ["-c", `${cat()} > '${file}'`]).status).toBe(0);
    expect(readFileSync(file).equals(log)).toBe(true);
    const socket = spawnSync(process.execPath, [binPath("pixir-log"), "cat", "big", "--workspace", ws], { maxBuffer: 64 << 20 });
    expect(socket.stdout.equals(log)).toBe(true);
    const pipe = spawnSync("bash", ["-c", `${cat()} | cat`], { maxBuffer: 64 << 20 });
    expect(pipe.stdout.equals(log)).toBe(true);
    const closed = spawnSync("bash", ["-c", `${cat()} | head -c 100 > /dev/null; echo "\${PIPESTATUS[0]}"`], { encoding: "utf8" });
    expect(closed.stdout.trim()).toBe("0");
    expect(closed.stderr).toBe("");
  }, 20_000);
});
