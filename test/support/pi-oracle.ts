// pi-interop.md §1.8 "Context build" and §5: what pi's own code (buildSessionContext) derives from a
// session file, in the shape of the fixtures' `expected/*.expected.json` oracles. The oracle tests
// compare imports and exports against these.
import { isJsonObject, type JsonObject } from "../../lib/envelope/src/event/envelope.js";
import { entryKind, PiTree, type ParsedPiSession } from "../../lib/envelope/src/interop/pi/format.js";

export interface PiModel {
  provider: unknown;
  modelId: unknown;
}

export interface PiContext {
  model: PiModel | null;
  thinkingLevel: unknown;
  messages: JsonObject[];
}

/** The message an entry contributes to the context, or null (§1.8 step 3). */
export function piContextMessage(entry: JsonObject): JsonObject | null {
  switch (entry.type) {
    case "message":
      return isJsonObject(entry.message) ? entry.message : null;
    case "custom_message":
      return { role: "custom", customType: entry.customType, content: entry.content, display: entry.display, details: entry.details, timestamp: entry.timestamp };
    case "branch_summary":
      return entry.summary ? { role: "branchSummary", summary: entry.summary, fromId: entry.fromId, timestamp: entry.timestamp } : null;
    default:
      return null;
  }
}

/** §1.8 context build over a root→leaf path of entries. */
export function buildPiContext(path: readonly JsonObject[]): PiContext {
  let thinkingLevel: unknown = "off";
  let model: PiModel | null = null;
  let compaction: JsonObject | null = null;
  let compactionAt = -1;
  path.forEach((e, i) => {
    if (e.type === "thinking_level_change") thinkingLevel = e.thinkingLevel;
    else if (e.type === "model_change") model = { provider: e.provider, modelId: e.modelId };
    else if (e.type === "message" && isJsonObject(e.message) && e.message.role === "assistant") model = { provider: e.message.provider, modelId: e.message.model };
    else if (e.type === "compaction") {
      compaction = e;
      compactionAt = i;
    }
  });
  const messages: JsonObject[] = [];
  const append = (e: JsonObject) => {
    const m = piContextMessage(e);
    if (m !== null) messages.push(m);
  };
  if (compaction !== null) {
    const c: JsonObject = compaction;
    messages.push({ role: "compactionSummary", summary: c.summary, tokensBefore: c.tokensBefore, timestamp: c.timestamp });
    let kept = false;
    for (let i = 0; i < compactionAt; i++) {
      if (path[i]!.id === c.firstKeptEntryId) kept = true;
      if (kept) append(path[i]!);
    }
    for (let i = compactionAt + 1; i < path.length; i++) append(path[i]!);
  } else {
    for (const e of path) append(e);
  }
  return { model, thinkingLevel, messages };
}

/** §5 step 5: the facts the oracle records of one context message. */
export function describePiMessage(m: JsonObject): JsonObject {
  const out: JsonObject = { role: m.role };
  const blocks = () => (typeof m.content === "string" ? "string" : Array.isArray(m.content) ? m.content.map((b) => (isJsonObject(b) ? b.type : null)) : null);
  switch (m.role) {
    case "assistant":
      out.stopReason = m.stopReason;
      out.blocks = blocks();
      break;
    case "user":
    case "toolResult":
    case "custom":
      out.blocks = blocks();
      break;
    case "bashExecution":
      out.excludeFromContext = Boolean(m.excludeFromContext);
      break;
    case "branchSummary":
      out.fromId = m.fromId;
      break;
    case "compactionSummary":
      out.tokensBefore = m.tokensBefore;
      break;
  }
  return out;
}

export function describePiContext(ctx: PiContext): JsonObject {
  return { model: ctx.model, thinkingLevel: ctx.thinkingLevel, messages: ctx.messages.map(describePiMessage) };
}

export interface PiOracleLeaf {
  leafId?: string;
  leafType: string;
  pathLength: number;
  pathIds?: string[];
  context: JsonObject;
}

/** The oracle of a parsed file, as `expected/<file>.expected.json` records it (without `fixture`). */
export interface PiOracle {
  fileVersion: number;
  header: JsonObject;
  entryCount: number;
  typeCounts: Record<string, number>;
  piDefaultLeafId?: string | null;
  piDefaultLeafIsLastLine: boolean;
  sessionName: string | null;
  labels?: Record<string, string>;
  roots: string[] | number;
  orphans: Array<{ id: string; missingParentId: unknown }> | number;
  leaves: PiOracleLeaf[];
}

/**
 * §5: derive the oracle from a parsed file. For v1 files the ids are minted by the migration, so (as in
 * the fixtures) ids are left out and roots and orphans are counts.
 */
export function derivePiOracle(parsed: ParsedPiSession, file = "-"): PiOracle {
  const tree = new PiTree(parsed.entries, file);
  const v1 = parsed.sourceVersion === 1;
  const typeCounts: Record<string, number> = {};
  for (const e of parsed.entries) {
    const k = entryKind(e.entry);
    typeCounts[k] = (typeCounts[k] ?? 0) + 1;
  }
  const leaves = tree.leaves.map((leaf): PiOracleLeaf => {
    const path = tree.path(leaf);
    const context = describePiContext(buildPiContext(path.map((p) => p.entry)));
    const base = { leafType: entryKind(leaf.entry), pathLength: path.length, context };
    return v1 ? base : { leafId: leaf.id, ...base, pathIds: path.map((p) => p.id) };
  });
  const last = parsed.entries.at(-1) ?? null;
  const oracle: PiOracle = {
    fileVersion: parsed.sourceVersion,
    header: { ...parsed.header, version: 3 },
    entryCount: parsed.entries.length,
    typeCounts,
    piDefaultLeafIsLastLine: tree.defaultLeaf !== null && tree.defaultLeaf === last,
    sessionName: tree.sessionName(),
    roots: v1 ? tree.roots.length : tree.roots.map((r) => r.id),
    orphans: v1 ? tree.orphans.length : tree.orphans.map((o) => ({ id: o.entry_id, missingParentId: o.missing_parent_id })),
    leaves,
  };
  if (!v1) {
    oracle.piDefaultLeafId = tree.defaultLeaf?.id ?? null;
    oracle.labels = tree.labels();
  }
  return oracle;
}
