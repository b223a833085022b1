// envelope-and-log.md §6: which directory is the Workspace. Apart from paths.ts, whose layout and
// confinement rules (and the hashing they need) a command line need not load before its command runs.
import { realpathSync, statSync } from "node:fs";
import path from "node:path";
import { PixirError } from "../event/errors.js";

/** Resolve --workspace, else $PIXIR_WORKSPACE, else cwd, to an absolute real directory path. */
export function resolveWorkspace(flag: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string {
  const chosen = flag !== undefined ? flag : env.PIXIR_WORKSPACE ? env.PIXIR_WORKSPACE : cwd;
  let real: string;
  try {
    real = realpathSync(path.resolve(cwd, chosen));
  } catch {
    throw new PixirError("invalid_args", "workspace directory does not exist", {
      field: "workspace",
      reason: "missing",
      next_actions: ["pass --workspace DIR naming an existing directory"],
    });
  }
  if (!statSync(real).isDirectory()) {
    throw new PixirError("invalid_args", "workspace is not a directory", {
      field: "workspace",
      reason: "not_a_directory",
      next_actions: ["pass --workspace DIR naming an existing directory"],
    });
  }
  return real;
}
