// claude-interop.md §3.4, §4.3 step 4: where each record of an import batch goes. The records the family's
// Logs hold already are adopted from them; the new ones are placed on the path Claude resumes, on true
// branches (share_v1 children) or as side records. Pure over the records: no Event is made here.
import { isJsonObject, type PixirEvent } from "../../event/envelope.js";
import { eventFacts } from "./held-event.js";
import { recordLineOf } from "./map.js";
import { childLogId } from "./discover.js";
import { matchForkFile, type SharedFork } from "./fork-file.js";
import { isConversation, newLog, refusal, sourceRecordSeqs, type BatchInput, type ExistingLog, type LogPlan, type LogRole } from "./plan-log.js";
import { RecordMap, UuidIndex } from "./record-columns.js";
import { hasToolResultBlock, inLineOrder, type ClaudeRecord, type TranscriptTree } from "./transcript.js";

export class Placement {
  /** Which Log holds each record. */
  readonly owner: RecordMap<LogPlan>;
  /** The family's Logs in creation order: parents before children. */
  readonly logs: LogPlan[] = [];
  /** The Log id of each inline group (§3.1). */
  readonly inlineIds: string[];
  /** The first record of each chain uuid (duplicates after it). */
  firstByUuid: UuidIndex<ClaudeRecord>;
  /** §3.7: a fork file that hangs from its source's Log, and its root Log. */
  shared: SharedFork | null = null;
  sharedRoot: LogPlan | null = null;
  private readonly byId = new Map<string, LogPlan>();
  private readonly rootOf: LogPlan[] = [];
  private readonly rootRole: LogRole;

  constructor(
    private readonly input: BatchInput,
    readonly groupStarts: ClaudeRecord[],
  ) {
    this.owner = new RecordMap(input.read.records.length);
    this.firstByUuid = new UuidIndex(input.read.records);
    this.inlineIds = groupStarts.map((g) => childLogId(input.src.base, `sidechain-${g.uuid}`));
    this.rootRole = input.src.kind === "subagent" ? "subagent" : "primary";
  }

  /** The record on physical line `line`: the records are in line order, so it is found by halving them. */
  private atLine(line: number): ClaudeRecord | undefined {
    const records = this.input.read.records;
    let lo = 0;
    let hi = records.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (records[mid]!.line < line) lo = mid + 1;
      else hi = mid;
    }
    return records[lo]?.line === line ? records[lo] : undefined;
  }

  /** §4.3 step 4: what the family's Logs hold (parents come first). */
  adoptExisting(): void {
    for (const ex of this.input.existing) {
      const log = this.existingLog(ex);
      for (let i = log.ownStart; i < ex.events.length; i++) this.adoptEvent(log, ex.events[i]!);
      this.byId.set(ex.id, log);
      this.logs.push(log);
    }
  }

  private existingLog(ex: ExistingLog): LogPlan {
    const { src } = this.input;
    const header = ex.first.type === "session_fork" ? ex.first : null;
    const parent = header !== null && typeof header.data.parent_session_id === "string" ? (this.byId.get(header.data.parent_session_id) ?? null) : null;
    const claude = isJsonObject(ex.first.data.claude) ? ex.first.data.claude : {};
    const inline = this.inlineIds.includes(ex.id);
    const transcript = ex.id === src.rootId ? 0 : this.inlineIds.indexOf(ex.id) + 1 || (parent?.transcript ?? 0);
    let role: LogRole = claude.fork_kind === "claude_root" ? "root_branch" : "branch";
    if (ex.id === src.rootId) role = claude.fork_kind === "claude_fork_session" ? "fork_session" : this.rootRole;
    else if (inline) role = "inline_subagent";
    const log = newLog(ex.id, role, parent, transcript);
    // The root Log holds most of a grown file's records: its last seqs a column at the file's length.
    if (ex.id === src.rootId) log.lastSeq = new RecordMap(this.input.read.records.length);
    log.existed = true;
    log.events = ex.events;
    log.diskEvents = ex.events.length;
    log.shareHops = ex.shareHops;
    log.ownStart = header !== null ? ex.replayCount + 1 : 0;
    if (header !== null) {
      log.forkedToSeq = typeof header.data.forked_to_seq === "number" ? header.data.forked_to_seq : 0;
      const fp = isJsonObject(header.data.claude) ? header.data.claude.fork_point_uuid : null;
      const cut = parent === null || typeof fp !== "string" ? -1 : parent.path.findIndex((r) => r.uuid === fp);
      log.path = parent === null ? [] : parent.path.slice(0, cut + 1);
      log.forkPoint = cut >= 0 ? parent!.path[cut]! : null;
    }
    return log;
  }

  /** An own Event of a Log on disk: the record it holds, checked against the file's line. */
  private adoptEvent(log: LogPlan, e: PixirEvent): void {
    const { ws, src, verifiedLines } = this.input;
    const facts = eventFacts(e);
    const line = facts.held ? facts.line : null;
    // §3.7: the copied records of a shared fork file are held by its root Log through its carrier.
    const c = facts.event === "claude_transcript" ? e.data.claude : null;
    if (isJsonObject(c) && Array.isArray(c.copied)) {
      const inheritedSeq = sourceRecordSeqs(log);
      for (const entry of c.copied) {
        const at = isJsonObject(entry) && typeof entry.line === "number" ? entry.line : 0;
        const rec = this.atLine(at);
        if (rec === undefined) throw refusal(ws, src, log.id, "transcript_changed", { line: at });
        const seq = inheritedSeq.get(String((entry as { source_uuid?: unknown }).source_uuid));
        if (seq !== undefined) log.lastSeq.set(rec, seq);
        this.owner.set(rec, log);
        if (rec.message) log.path.push(rec);
      }
    }
    if (line !== null) {
      const rec = this.atLine(line);
      // A held line past the checkpoint (an interrupted run) must still be the file's line.
      if (rec === undefined || (line > verifiedLines && !sameLine(e, rec))) throw refusal(ws, src, log.id, "transcript_changed", { line });
      if (this.owner.has(rec)) throw refusal(ws, src, log.id, "record_in_two_logs", { line });
      this.owner.set(rec, log);
      if (facts.path) log.path.push(rec);
    }
    if (facts.line !== null) {
      const rec = this.atLine(facts.line);
      if (rec !== undefined) log.lastSeq.set(rec, e.seq!);
    }
  }

  /** §3.7: a fork file whose source is here hangs from the source's Log and stores no copied record. */
  adoptSharedFork(): void {
    const { input } = this;
    const { src } = input;
    if (input.existing.length !== 0 || src.kind !== "fork_session" || !input.forkSource) return;
    const shared = matchForkFile(src.claudeSessionId, input.read.records, input.forkSource);
    if (shared === null) return;
    const g = newLog(shared.parentId, "primary", null, 0);
    g.events = shared.parentEvents;
    g.existed = true;
    const root = newLog(src.rootId, "fork_session", g, 0);
    root.forkedToSeq = shared.forkedToSeq;
    for (const c of shared.copied) {
      this.owner.set(c, root);
      if (c.message) root.path.push(c);
    }
    this.logs.push(root);
    this.byId.set(root.id, root);
    this.shared = shared;
    this.sharedRoot = root;
  }

  /** The root Log of transcript `t` (0: the file's, k: inline group k), made when first asked. */
  transcriptRoot(t: number): LogPlan {
    const known = this.rootOf[t];
    if (known !== undefined) return known;
    const id = t === 0 ? this.input.src.rootId : this.inlineIds[t - 1]!;
    let log = this.byId.get(id);
    if (log === undefined) {
      log = newLog(id, t === 0 ? this.rootRole : "inline_subagent", null, t);
      this.logs.push(log);
      this.byId.set(id, log);
    }
    this.rootOf[t] = log;
    return log;
  }

  /** `recs` (an array of the caller's own, which the Log may keep) placed on `log`. */
  private place(log: LogPlan, recs: ClaudeRecord[], isPath: boolean): void {
    inLineOrder(recs);
    for (const r of recs) {
      this.owner.set(r, log);
      if (isPath) log.placedOnPath.add(r);
    }
    // The first records placed on a Log are most often nearly all of them (a session's path): kept as
    // they are, not copied one at a time into arrays that grow (docs/performance.md, "Round 6").
    if (log.placed.length === 0) log.placed = recs;
    else for (const r of recs) log.placed.push(r);
    if (!isPath) return;
    if (log.path.length === 0) log.path = recs.slice();
    else for (const r of recs) log.path.push(r);
  }

  /** §3.4 "branch of G at F": a new child Log holding `recs` as its path. */
  private branch(g: LogPlan, f: ClaudeRecord | null, recs: ClaudeRecord[], t: number): void {
    const head = recs.reduce((a, b) => (b.line < a.line ? b : a));
    const root = this.transcriptRoot(t);
    const log = newLog(childLogId(root.id, head.uuid!), f === null ? "root_branch" : "branch", g, t);
    log.forkPoint = f;
    if (f === null) log.path = [];
    else {
      const cut = g.path.indexOf(f);
      log.path = cut >= 0 ? g.path.slice(0, cut + 1) : g.path.filter((r) => r.line <= f.line);
    }
    this.logs.push(log);
    this.byId.set(log.id, log);
    this.place(log, recs, true);
  }

  /** §3.4 steps 1–4 for transcript `t`. */
  placeTranscript(tree: TranscriptTree, t: number): void {
    const { owner } = this;
    const root = this.transcriptRoot(t);
    const isNew = (r: ClaudeRecord) => !owner.has(r);
    const walkNew = (x: ClaudeRecord) => {
      const w = tree.walk(x, true, (r) => owner.has(r));
      const lp = tree.logicalParent(w.at(-1)!);
      const f = lp !== null && owner.has(lp) ? lp : null;
      // The walk's own array, grown by what it recovers (a copy of it was 1.5 MB on a 400 MB session).
      for (const r of tree.recover(w, f)) if (isNew(r)) w.push(r);
      return { f, recs: w };
    };
    // Step 1: the leaf's path.
    const leaf = tree.leaf;
    if (leaf !== null && isNew(leaf)) {
      const { f, recs } = walkNew(leaf);
      const g = f === null ? null : owner.get(f)!;
      if (g === null) {
        if (root.path.length === 0) this.place(root, recs, true);
        else this.branch(root, null, recs, t);
      } else {
        const cp = tree.claudePath(leaf);
        if (g.path.every((r) => !isConversation(r) || cp.has(r))) this.place(g, recs, true);
        else this.branch(g, f, recs, t);
      }
    }
    // Step 2: late tool results.
    for (const r of tree.messages) {
      if (!isNew(r) || r.type !== "user" || !hasToolResultBlock(r)) continue;
      const p = tree.parent(r);
      if (p !== null && p.type === "assistant" && owner.has(p)) this.place(owner.get(p)!, [r], true);
    }
    // Step 3: other tips.
    const inner = tree.withConversationDescendant();
    for (const r of tree.messages) {
      if (!isNew(r) || !isConversation(r) || inner.has(r)) continue;
      const { f, recs } = walkNew(r);
      const g = f === null ? null : owner.get(f)!;
      if (g === null) this.branch(root, null, recs, t);
      else if (g.path.at(-1) === f) this.place(g, recs, true);
      else this.branch(g, f, recs, t);
    }
    // Step 4: leftovers, as side records.
    for (const r of tree.messages) {
      if (!isNew(r)) continue;
      const held = tree.walk(r).find((x) => owner.has(x));
      this.place(held ? owner.get(held)! : root, [r], false);
    }
  }

  /** The first record of each chain uuid, for the trees (plan.ts) and the side records (placeRest). */
  indexUuids(): UuidIndex<ClaudeRecord> {
    const { read } = this.input;
    // The reading's table: a second one cost 10 MB on a 400 MB session.
    if (read.firstByUuid !== undefined) this.firstByUuid = read.firstByUuid;
    else for (const r of read.records) if (r.chain && !r.dup) this.firstByUuid.add(r);
    return this.firstByUuid;
  }

  /** Every record is placed and its Events made: what the plan's Events read again is kept, not this map. */
  letGo(): void {
    this.firstByUuid = new UuidIndex(this.input.read.records);
    this.input.read.firstByUuid = undefined;
  }

  /** §3.4 step 5: progress, duplicates, metadata and malformed lines, as side records. */
  placeRest(records: ClaudeRecord[], trees: TranscriptTree[]): void {
    const { owner, firstByUuid } = this;
    for (const r of records) {
      if (owner.has(r)) continue;
      let target: LogPlan;
      if (r.chain && r.dup) target = owner.get(firstByUuid.get(r.uuid!)!) ?? this.transcriptRoot(r.transcript);
      else if (r.chain && r.type === "progress") {
        const u = trees[r.transcript]!.bridge(r.parentUuid);
        const m = u === null ? undefined : firstByUuid.get(u);
        target = (m && m.message ? owner.get(m) : undefined) ?? this.transcriptRoot(r.transcript);
      } else target = this.transcriptRoot(0);
      this.place(target, [r], false);
    }
  }
}

function sameLine(e: PixirEvent, rec: ClaudeRecord): boolean {
  const c = e.data.claude;
  const held = isJsonObject(c) ? recordLineOf(c) : null;
  const own = rec.raw ?? (rec.text !== null ? Buffer.from(rec.text, "utf8") : null);
  return held !== null && own !== null && held.equals(own);
}
