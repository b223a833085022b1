// Progress of a long job (cli.md: diagnostics go to stderr). The command decides whether to show it
// (CommandContext.progress: only on a terminal, never with --json); the job only counts bytes.

/** One progress line per this many bytes. */
export const PROGRESS_STEP_BYTES = 64 * 1024 * 1024;

/** Calls `say` each time another `step` bytes have gone by; `add` is one addition and one comparison. */
export class ByteProgress {
  private done = 0;
  private next: number;

  constructor(
    private readonly say: (bytes: number) => void,
    private readonly step = PROGRESS_STEP_BYTES,
  ) {
    this.next = step;
  }

  add(bytes: number): void {
    this.done += bytes;
    if (this.done < this.next) return;
    this.say(this.done);
    this.next = (Math.floor(this.done / this.step) + 1) * this.step;
  }

  /** Count from zero again (a job that starts its pass over), without repeating the lines already said. */
  restart(): void {
    this.done = 0;
  }
}

/** Whole mebibytes, as progress lines print them. */
export const mebibytes = (bytes: number): string => `${Math.floor(bytes / (1024 * 1024))} MiB`;
