// A stream command interrupted while its reader is slow (cli.md: Ctrl-C rolls back, exit 130): shared by the
// export tests of each format.
import { spawn } from "node:child_process";
import { binPath, workspace } from "./cli.js";

/** A Workspace holding "big": 4,000 user messages of about 1 KB (a 4 MB export, more than a pipe holds). */
export const bigWorkspace = (): string =>
  workspace({ big: Array.from({ length: 4000 }, (_, i) => ({ type: "user_message", data: { text: `message ${i} ${"x".repeat(1000)}` } })) });

/**
 * Run `pixir ARGV` in `ws`, stop reading its stdout after the first piece (the rest waits for room), then
 * send SIGINT: its exit code and stderr.
 */
export async function interruptWhileReaderIsSlow(ws: string, argv: string[]): Promise<{ code: unknown; stderr: string }> {
  const child = spawn(process.execPath, [binPath("pixir"), ...argv], { cwd: ws, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  await new Promise((resolve) => child.stdout.once("data", resolve));
  child.stdout.pause();
  await new Promise((resolve) => setTimeout(resolve, 200));
  child.kill("SIGINT");
  const code = await new Promise((resolve) => child.on("close", resolve));
  return { code, stderr };
}
