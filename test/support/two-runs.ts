// Two imports into the same Workspace path, to compare their Logs byte for byte (subagent links and fork
// headers name the Workspace, and prefix digests cover them): the Workspace as `setup` left it is copied
// aside, the first run goes, its Workspace is moved away and the copy put back for the second run.
import { cpSync, readdirSync, readFileSync, renameSync } from "node:fs";
import path from "node:path";
import { tempDir } from "./cli.js";

export async function twoRuns<T>(setup: (ws: string) => Promise<void>, first: (ws: string) => Promise<T>, second: (ws: string) => Promise<T>) {
  const ws = tempDir();
  await setup(ws);
  const aside = `${ws}.first`;
  cpSync(ws, aside, { recursive: true });
  const a = await first(ws);
  renameSync(ws, `${ws}.done`);
  renameSync(aside, ws);
  const b = await second(ws);
  return { a, b, wsA: `${ws}.done`, wsB: ws };
}

/** The Logs of a Workspace, by file name. */
export const logsOf = (ws: string): Record<string, string> => {
  const dir = path.join(ws, ".pixir", "sessions");
  return Object.fromEntries(readdirSync(dir).sort().map((n) => [n, readFileSync(path.join(dir, n), "utf8")]));
};
