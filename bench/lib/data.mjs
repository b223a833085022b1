// The benchmark data set: one generated Log per size, reused across runs (and across benchmarks).
//   bench/.data/ws-<size>/.pixir/sessions/<session>.ndjson   the Log (a real Workspace)
//   bench/.data/ws-<size>.gen.json                           what gen-log produced (outside .pixir/)
// A Log is reused only if its recorded generator version, seed, target and size still match;
// a Log that grew by a leftover benchmark append (an interrupted run) is truncated back first.
import { existsSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { generate, GENERATOR_VERSION } from "../gen-log.mjs";
import { sizeLabel } from "./util.mjs";

export const benchDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const repoRoot = path.dirname(benchDir);
export const dataDir = path.join(benchDir, ".data");

export function workspaceFor(bytes) {
  return path.join(dataDir, `ws-${sizeLabel(bytes)}`);
}

export function logFile(ws, session) {
  return path.join(ws, ".pixir", "sessions", `${session}.ndjson`);
}

/** Remove what an interrupted benchmark append may have left behind: its journal and lease. */
export function cleanWriteState(ws, session) {
  rmSync(`${logFile(ws, session)}.append-journal`, { force: true });
  rmSync(path.join(ws, ".pixir", "session_leases", `${session}.json`), { force: true });
}

/**
 * Make sure the Log of `session` with about `bytes` bytes exists; generate it if not.
 * Returns {ws, log, meta, generated}.
 */
export async function ensureLog({ bytes, session = "big", seed = "pixir-bench-v1", regenerate = false, log: say = () => {} }) {
  const ws = workspaceFor(bytes);
  const log = logFile(ws, session);
  const metaFile = `${ws}.${session}.gen.json`;
  let meta = null;
  try {
    meta = JSON.parse(readFileSync(metaFile, "utf8"));
  } catch {
    meta = null;
  }
  const matches = meta && meta.generator_version === GENERATOR_VERSION && meta.seed === seed && meta.target_bytes === bytes && meta.session === session;
  if (!regenerate && matches && existsSync(log)) {
    const size = statSync(log).size;
    if (size > meta.bytes) {
      say(`truncating ${path.relative(repoRoot, log)} back to ${meta.bytes} bytes (leftover append)`);
      truncateSync(log, meta.bytes);
    }
    if (statSync(log).size === meta.bytes) {
      cleanWriteState(ws, session);
      return { ws, log, meta, generated: false };
    }
  }
  say(`generating ${sizeLabel(bytes)} Log ${path.relative(repoRoot, log)} (seed ${JSON.stringify(seed)}) ...`);
  rmSync(metaFile, { force: true });
  cleanWriteState(ws, session);
  const summary = await generate({ out: log, session, seed, bytes, progress: true });
  meta = { ...summary, target_bytes: bytes, generated_at: new Date().toISOString() };
  writeFileSync(metaFile, `${JSON.stringify(meta, null, 2)}\n`);
  say(`generated ${summary.events} events, ${summary.bytes} bytes in ${summary.seconds} s`);
  return { ws, log, meta, generated: true };
}
