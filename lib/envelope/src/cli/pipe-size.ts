// Larger pipes between the stages of a pipeline (docs/performance.md, "Pipes of 1 MiB").
//
// A Linux pipe holds 64 KiB, so a GiB crosses it in some 16,000 hand-overs, each one waking the process
// on the other side; between stages that take turns on two cores those wake-ups cost about a sixth of a
// four-stage pipeline's wall time. fcntl(F_SETPIPE_SZ) enlarges the pipe itself, not one descriptor of it,
// so any process holding the pipe can do it for all of them. Node has no fcntl: a process that inherits
// our stdout does it for us, once a command has written enough for it to matter. It is an optimisation
// only: where it cannot be done (no perl, not Linux, the user's pipe quota spent) the pipe stays as it was.
import { existsSync, fstatSync } from "node:fs";
import { PixirError } from "../event/errors.js";

/** F_SETPIPE_SZ from <linux/fcntl.h> (F_LINUX_SPECIFIC_BASE + 7). */
const F_SETPIPE_SZ = 1031;
/** The default size we ask for: /proc/sys/fs/pipe-max-size, the most an unprivileged process may set. */
export const DEFAULT_PIPE_BYTES = 1 << 20;
/** A command enlarges its stdout pipe only after writing this much: short outputs never start a process. */
export const GROW_PIPE_AFTER = 1 << 20;
/** perl is part of every Debian-like system (perl-base is essential); an absolute path, so PATH picks nothing. */
const PERL_PATHS = ["/usr/bin/perl", "/bin/perl"];

/**
 * PIXIR_PIPE_BYTES: unset or empty for the default, 0 to leave pipes alone, else the size to ask for (at
 * least one page; the kernel rounds it up to a power of two and refuses more than pipe-max-size).
 */
export function pipeBytes(env: NodeJS.ProcessEnv): number {
  const set = env.PIXIR_PIPE_BYTES;
  if (set === undefined || set === "") return DEFAULT_PIPE_BYTES;
  if (/^(0|[1-9][0-9]{0,9})$/.test(set)) {
    const n = Number(set);
    if (n === 0 || (n >= 4096 && n <= 2 ** 31 - 1)) return n;
  }
  throw new PixirError("invalid_args", "PIXIR_PIPE_BYTES must be 0 or a byte count from 4096 to 2147483647", {
    field: "PIXIR_PIPE_BYTES",
    next_actions: ["unset PIXIR_PIPE_BYTES", "set it to 0 to leave pipes at their size"],
  });
}

/**
 * Ask for the pipe on descriptor `fd` to hold `bytes`, if it is a pipe; never waits and never fails.
 * The helper gets an empty environment (no PERL5OPT, PERL5LIB) and only that descriptor.
 */
export function growPipe(fd: 0 | 1, bytes: number): void {
  if (bytes === 0 || process.platform !== "linux") return;
  try {
    if (!fstatSync(fd).isFIFO()) return;
  } catch {
    return;
  }
  const perl = PERL_PATHS.find((p) => existsSync(p));
  if (perl === undefined) return;
  // Loaded here, not at start: node:child_process costs every run a few milliseconds (docs/performance.md).
  void import("node:child_process").then(({ spawn }) => {
    try {
      // The pipe is the helper's descriptor 3, not one of its stdio: a child's stdio is made blocking,
      // and the flag belongs to the pipe's open file, which is ours too (our writes would then block).
      const child = spawn(perl, ["-e", `open(my $pipe, "${fd === 0 ? "<" : ">"}&=3") or exit 1; fcntl($pipe, ${F_SETPIPE_SZ}, ${bytes}) or exit 1`], {
        stdio: ["ignore", "ignore", "ignore", fd],
        env: {},
      });
      child.on("error", () => undefined);
      child.unref();
    } catch {
      // Nothing to do: the pipe keeps its size.
    }
  });
}
