// fork.md §7: Session resources are content-addressed payloads. A replay_v1 child gets its own
// verified copy of every payload its inherited Events reference, before its Log is created.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { PixirError } from "../event/errors.js";
import { ensureStateDir, inspectStatePath, placeComplete, sessionsDir, StatePath, tempSibling } from "./paths.js";
import { assertSessionId } from "../event/session-id.js";

const EXTENSION = /^[A-Za-z0-9]{1,16}$/;
const SHA256 = /^[0-9a-f]{64}$/;

export interface ResourceRef {
  resourceId: string;
  sha256: string;
  extension: string;
}

/** fork.md §7 step 2 and envelope-and-log.md §6: every field present and well-formed. */
export function checkDescriptor(d: Record<string, unknown>): ResourceRef {
  for (const key of ["resource_id", "content_sha256", "extension"]) {
    if (d[key] === undefined || d[key] === null) {
      throw new PixirError("invalid_args", `resource descriptor is missing ${key}`, { field: key, reason: "missing" });
    }
  }
  assertSessionId(d.resource_id, "resource_id");
  if (typeof d.extension !== "string" || !EXTENSION.test(d.extension)) {
    throw new PixirError("invalid_args", "resource extension is invalid", { field: "extension", reason: "invalid_format" });
  }
  if (typeof d.content_sha256 !== "string" || !SHA256.test(d.content_sha256)) {
    throw new PixirError("invalid_args", "resource checksum is invalid", { field: "content_sha256", reason: "invalid_format" });
  }
  return { resourceId: d.resource_id as string, sha256: d.content_sha256, extension: d.extension };
}

export function resourcePath(ws: string, sessionId: string, ref: ResourceRef): StatePath {
  return new StatePath(ws, [...sessionsDir(ws).components, sessionId, "resources", ref.resourceId, `${ref.sha256}.${ref.extension}`], "file");
}

/**
 * The bytes of a payload from the first Session of `sources` that has it, checked against its SHA-256
 * (`resource_missing` when absent or different).
 */
export function readVerifiedPayload(ws: string, sources: readonly string[], ref: ResourceRef): Buffer {
  let found: StatePath | null = null;
  for (const s of sources) {
    const p = resourcePath(ws, s, ref);
    if (inspectStatePath(p) === "present") {
      found = p;
      break;
    }
  }
  if (found === null) {
    throw new PixirError("resource_missing", "session resource payload is missing", {
      resource_id: ref.resourceId,
      path: resourcePath(ws, sources[0] ?? "", ref).rel,
    });
  }
  const bytes = readFileSync(found.abs);
  const actual = createHash("sha256").update(bytes).digest("hex");
  if (actual !== ref.sha256) {
    throw new PixirError("resource_missing", "session resource checksum mismatch", {
      resource_id: ref.resourceId,
      path: found.rel,
      expected_sha256: ref.sha256,
      actual_sha256: actual,
    });
  }
  return bytes;
}

/** Write one payload with temp + rename, directories made one at a time; an identical one is kept. */
export function writePayload(dest: StatePath, bytes: Buffer, sha256: string): void {
  if (inspectStatePath(dest) === "present" && createHash("sha256").update(readFileSync(dest.abs)).digest("hex") === sha256) return;
  ensureStateDir(dest.parent());
  placeComplete(tempSibling(dest), dest, bytes, "rename");
}

/**
 * Copy each payload from the first Session of `sources` (parent, then its share ancestors) that has it,
 * verifying its SHA-256, to `childId`'s resources. Returns the number of payloads copied or present.
 * With `verifyOnly` (dry runs) the payloads are found and hashed but nothing is written.
 */
export function copyResources(ws: string, sources: readonly string[], childId: string, refs: readonly ResourceRef[], verifyOnly = false): number {
  for (const ref of refs) {
    const bytes = readVerifiedPayload(ws, sources.length > 0 ? sources : [childId], ref);
    if (!verifyOnly) writePayload(resourcePath(ws, childId, ref), bytes, ref.sha256);
  }
  return refs.length;
}
