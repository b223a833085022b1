// Images in pi content become Session Resources (fork.md §7 layout): the payload is stored once, by
// content, under .pixir/sessions/<id>/resources/<resource_id>/<sha256>.<ext>, and the block keeps a
// resource_id where its base64 `data` was. The export puts the same base64 back.
import { createHash } from "node:crypto";
import { isJsonObject, type JsonObject } from "../../event/envelope.js";
import type { StatePath } from "../../store/paths.js";
import { checkDescriptor, readVerifiedPayload, resourcePath, type ResourceRef } from "../../store/resources.js";

const EXTENSIONS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/jpg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/bmp": "bmp",
  "image/svg+xml": "svg",
  "image/tiff": "tif",
  "image/avif": "avif",
  "image/heic": "heic",
};

export interface ImageSink {
  /** Store a payload (deduplicated by content); returns its descriptor. */
  add(bytes: Buffer, mimeType: unknown): JsonObject;
}

/** Reads a payload named by a descriptor and returns it as base64. */
export type ImageLoader = (descriptor: JsonObject) => string;

export interface Payload {
  ref: ResourceRef;
  bytes: Buffer;
  path: StatePath;
}

/** The payloads of one Log, keyed by their workspace-relative path. */
export class ResourceCollector implements ImageSink {
  readonly payloads = new Map<string, Payload>();

  constructor(
    private readonly ws: string,
    private readonly sessionId: string,
  ) {}

  add(bytes: Buffer, mimeType: unknown): JsonObject {
    const sha = createHash("sha256").update(bytes).digest("hex");
    const ext = (typeof mimeType === "string" && EXTENSIONS[mimeType.toLowerCase()]) || "bin";
    const ref: ResourceRef = { resourceId: `img-${sha.slice(0, 32)}`, sha256: sha, extension: ext };
    const p = resourcePath(this.ws, this.sessionId, ref);
    if (!this.payloads.has(p.rel)) this.payloads.set(p.rel, { ref, bytes, path: p });
    return {
      resource_id: ref.resourceId,
      content_sha256: sha,
      extension: ext,
      ...(typeof mimeType === "string" ? { media_type: mimeType } : {}),
      byte_size: bytes.length,
      store_ref: p.rel,
    };
  }
}

/** A base64 string that decodes and re-encodes to itself, so the export can give back the same text. */
function canonicalBase64(s: string): Buffer | null {
  if (s.length === 0) return null;
  const bytes = Buffer.from(s, "base64");
  return bytes.toString("base64") === s ? bytes : null;
}

/** Replace each inline image block's `data` by a `resource_id` in the same position. */
export function externalizeImages(content: unknown, sink: ImageSink): { content: unknown; resources: JsonObject[] } {
  if (!Array.isArray(content)) return { content, resources: [] };
  const resources = new Map<string, JsonObject>();
  const out = content.map((block) => {
    if (!isJsonObject(block) || block.type !== "image" || typeof block.data !== "string" || Object.hasOwn(block, "resource_id")) return block;
    const bytes = canonicalBase64(block.data);
    if (bytes === null) return block;
    const descriptor = sink.add(bytes, block.mimeType);
    const rid = descriptor.resource_id as string;
    if (!resources.has(rid)) resources.set(rid, descriptor);
    return Object.fromEntries(Object.entries(block).map(([k, v]) => (k === "data" ? ["resource_id", rid] : [k, v])));
  });
  return { content: out, resources: [...resources.values()] };
}

/** The inverse: blocks whose resource_id names one of `resources` get their base64 `data` back. */
export function internalizeImages(content: unknown, resources: unknown, load: ImageLoader): unknown {
  if (!Array.isArray(content) || !Array.isArray(resources)) return content;
  const byId = new Map<string, JsonObject>();
  for (const d of resources) if (isJsonObject(d) && typeof d.resource_id === "string") byId.set(d.resource_id, d);
  return content.map((block) => {
    if (!isJsonObject(block) || block.type !== "image" || Object.hasOwn(block, "data") || typeof block.resource_id !== "string") return block;
    const descriptor = byId.get(block.resource_id);
    if (descriptor === undefined) return block;
    const data = load(descriptor);
    return Object.fromEntries(Object.entries(block).map(([k, v]) => (k === "resource_id" ? ["data", data] : [k, v])));
  });
}

/**
 * An ImageLoader that looks for the payload in each of `sessions` in turn (the Log holding the Event
 * first), verifying its SHA-256 (fork.md §7 step 4).
 */
export function workspaceImageLoader(ws: string, sessions: () => readonly string[]): ImageLoader {
  const cache = new Map<string, string>();
  return (d) => {
    const ref = checkDescriptor(d);
    const key = `${ref.resourceId}/${ref.sha256}.${ref.extension}`;
    const cached = cache.get(key);
    if (cached !== undefined) return cached;
    const bytes = readVerifiedPayload(ws, sessions(), ref);
    const base64 = bytes.toString("base64");
    cache.set(key, base64);
    return base64;
  };
}
