// fork.md §3–§4, §10: the fork plan and the fork stream. One pass over the parent History computes the
// plan (counts, digest, open tool calls, safe cut points); a second pass emits the inherited Events. The
// parent comes from one of four sources, a file each: a Log in our layout (parent-log.ts), any other Log
// through the loader (parent-loader.ts), a regular file on stdin (parent-stdin-file.ts) and a pipe on
// stdin (parent-pipe.ts); all copy through ChildLines (child-lines.ts) into one writer (fork-write.ts).
import { isLineProblem, type JsonObject, type PixirEvent, serializeEvent } from "../event/envelope.js";
import { decodeLogLine, LineDecoder } from "../fast/decode-line.js";
import { OpenCalls, type ParentSource, type PrefixFacts } from "./fork-plan.js";
import { IdSet } from "../event/id-set.js";
import { logPath } from "../store/paths.js";
import { PixirError, usageError } from "../event/errors.js";
import { newUlid } from "../event/ids.js";
import { inheritedItem, PrefixDigest } from "../store/loader.js";
import { DigestLadder } from "../store/digest-ladder.js";
import { FORK_STRATEGIES, type ForkStrategy } from "../event/vocabulary.js";
import { type ParentReadOptions, parentThroughLoader } from "./parent-loader.js";
import { parentFromOurLog } from "./parent-log.js";
import { fdRange, parentFromStdinFile, seekableFd } from "./parent-stdin-file.js";
import { parentFromPipe } from "./parent-pipe.js";

export const REPLAY_LIMITATIONS = ["full replayed prefix remains authoritative; session_fork is lineage metadata only"];

export const SHARE_LIMITATIONS = ["shared prefix is read from the parent log and verified by prefix_digest; the parent log must be kept"];

/** The plan JSON of fork.md §3.2. */
export interface ForkPlan {
  ok: true;
  recorded: boolean;
  dry_run: boolean;
  parent_session_id: string;
  child_session_id: string;
  fork_root_session_id: string;
  from_seq: number | null;
  to_seq: number;
  event_count: number;
  workspace: string;
  parent_log_path: string;
  child_log_path: string;
  summarize: boolean;
  would_record_branch_summary: boolean;
  branch_summary_strategy: string | null;
  strategy: ForkStrategy;
  resume_command: string;
  prefix_digest: string;
  open_tool_calls: string[];
  resource_count: number;
}

/**
 * The line a recorded fork prints on stderr in text mode: what to run next, with our own commands.
 * The plan's `resume_command` (fork.md §3) names Pixir's runtime command `pixir resume`, kept for
 * Pixir's readers of the plan; our `pixir` wrapper has no such command, so it is not printed as a hint.
 */
export const forkNextHint = (childId: string): string =>
  `hint: continue the child with pixir append ${childId}; pixir context ${childId} prints what a model sees of it`;

/** cli.md §12.11: the text of a fork plan, recorded or not. */
export function forkPlanText(plan: ForkPlan): string {
  return plan.recorded
    ? `Forked ${plan.parent_session_id} → ${plan.child_session_id} (${plan.event_count} events through seq ${plan.to_seq}).`
    : `Fork plan for ${plan.parent_session_id}: would create child ${plan.child_session_id} with ${plan.event_count} replayed events through seq ${plan.to_seq}.`;
}

export function forkPlan(
  ws: string,
  parentId: string,
  childId: string,
  facts: Pick<PrefixFacts, "forkRootSessionId" | "fromSeq" | "toSeq" | "eventCount" | "prefixDigest" | "openToolCalls" | "resourceCount">,
  strategy: ForkStrategy,
  flags: { recorded: boolean; dryRun: boolean; summaryStrategy: string | null },
): ForkPlan {
  return {
    ok: true,
    recorded: flags.recorded,
    dry_run: flags.dryRun,
    parent_session_id: parentId,
    child_session_id: childId,
    fork_root_session_id: facts.forkRootSessionId,
    from_seq: facts.fromSeq,
    to_seq: facts.toSeq,
    event_count: facts.eventCount,
    workspace: ws,
    parent_log_path: logPath(ws, parentId).abs,
    child_log_path: logPath(ws, childId).abs,
    summarize: flags.summaryStrategy !== null,
    would_record_branch_summary: flags.summaryStrategy !== null,
    branch_summary_strategy: flags.summaryStrategy,
    strategy,
    resume_command: `pixir resume ${childId} "..."`,
    prefix_digest: facts.prefixDigest,
    open_tool_calls: facts.openToolCalls,
    resource_count: strategy === "share_v1" ? 0 : facts.resourceCount,
  };
}

/**
 * The importers' lineage bound: a branch (Claude) or rollback child (Codex) is a share_v1 child of the Log
 * that owns its fork point while its chain of share hops stays within this; the one that would pass it
 * stores its prefix (replay_v1) and the chain starts again from it. Far below the readers' guard
 * (MAX_FORK_DEPTH, 32): a leaf resolves at most 4 parents, a share fork of it still has room, and a long
 * chain stores the prefix in one branch of four.
 */
export const MAX_IMPORT_SHARE_HOPS = 4;

/**
 * fork.md §4.3: how many inherited Events a Log stores after its header: a replay_v1 child (written so, or
 * a share child pixir-log materialize turned) holds copies of its parent's prefix, which are not its own.
 */
export function storedPrefixCount(first: PixirEvent): number {
  const d = first.data;
  return first.type === "session_fork" && first.seq === 0 && d.strategy === "replay_v1" && typeof d.replay_event_count === "number" ? d.replay_event_count : 0;
}

/** fork.md §10: --strict-boundary refuses a cut that leaves tool calls open. */
export function checkBoundary(facts: PrefixFacts, requestedToSeq: number | undefined): void {
  if (facts.openToolCalls.length === 0) return;
  throw new PixirError("unsafe_fork_boundary", undefined, {
    to_seq: requestedToSeq ?? facts.toSeq,
    open_tool_calls: facts.openToolCalls,
    nearest_safe_seq: facts.nearestSafeSeq,
    next_safe_seq: facts.nextSafeSeq,
  });
}

/**
 * fork.md §3.1 steps 6–8 and §4.3: the data of a share_v1 header over `inherited`, the parent's replayable
 * Events up to `toSeq` in History order (an importer that plans a child in memory: Codex rollbacks and forks).
 * `lineOf` gives an Event's Log line (without its `\n`) when the importer has it as bytes: such a line is
 * digested from its bytes, as the loader digests it when it reads the Log (its data is not parsed).
 */
export function shareHeaderData(ws: string, parentId: string, forkRootId: string, toSeq: number, inherited: readonly PixirEvent[], lineOf?: (e: PixirEvent) => Buffer | null): JsonObject {
  const digest = new PrefixDigest();
  const open = new OpenCalls(new IdSet());
  const decoder = new LineDecoder();
  for (const e of inherited) {
    const bytes = lineOf?.(e) ?? null;
    const line = bytes !== null ? decodeLogLine(bytes, false, decoder) : null;
    const canonical = line !== null && !isLineProblem(line) ? line.canonical : null;
    digest.addLine(e, bytes ?? undefined, canonical);
    open.add(e, canonical);
  }
  return shareHeaderFields(ws, parentId, forkRootId, toSeq, inherited, digest.digest(), open.list());
}

/** A Log an importer plans in memory: its resolved History, and the ladder of its prefix digests once cut. */
export interface LadderedLog {
  sessionId: string;
  resolved: PixirEvent[];
  digests?: DigestLadder;
}

/**
 * shareHeaderData for a planner that cuts share children from its Logs again and again (Codex rollbacks,
 * Gemini and opencode branches): the digest from the parent's ladder (store/digest-ladder.ts), and the
 * child's ladder started from it, since the child's History begins with copies of `inherited`.
 */
export function plannedShareHeader(ws: string, parent: LadderedLog, child: LadderedLog, forkRootId: string, toSeq: number, inherited: readonly PixirEvent[]): JsonObject {
  parent.digests ??= new DigestLadder(() => parent.resolved);
  const digest = parent.digests.digestOf(inherited);
  if (digest === null) return shareHeaderData(ws, parent.sessionId, forkRootId, toSeq, inherited);
  child.digests = parent.digests.sharedWith(() => child.resolved, inherited.length);
  return shareHeaderWithDigest(ws, parent.sessionId, forkRootId, toSeq, inherited, digest);
}

/** Inherited Events in History order: an array, or a view that makes each as it is read (a Codex lean plan). */
export interface EventSequence extends Iterable<PixirEvent> {
  readonly length: number;
  at(i: number): PixirEvent | undefined;
}

/**
 * shareHeaderData with the prefix digest of `inherited` already made (store/digest-ladder.ts: a planner that
 * cuts one Log many times); the open tool calls are read from the Events' data.
 */
export function shareHeaderWithDigest(ws: string, parentId: string, forkRootId: string, toSeq: number, inherited: EventSequence, prefixDigest: string): JsonObject {
  const open = new OpenCalls(new IdSet());
  for (const e of inherited) open.add(e);
  return shareHeaderFields(ws, parentId, forkRootId, toSeq, inherited, prefixDigest, open.list());
}

function shareHeaderFields(ws: string, parentId: string, forkRootId: string, toSeq: number, inherited: EventSequence, prefixDigest: string, openToolCalls: string[]): JsonObject {
  return {
    parent_session_id: parentId,
    fork_root_session_id: forkRootId,
    forked_to_seq: toSeq,
    parent_workspace: ws,
    child_workspace: ws,
    replay_event_count: inherited.length,
    from_seq: inherited.at(0)?.seq ?? null,
    strategy: "share_v1",
    limitations: SHARE_LIMITATIONS,
    prefix_digest: prefixDigest,
    open_tool_calls: openToolCalls,
  };
}

/** The session_fork header Event of fork.md §4.3. */
export function forkHeader(ws: string, parentId: string, childId: string, facts: PrefixFacts, strategy: ForkStrategy): PixirEvent {
  return {
    id: newUlid(),
    session_id: childId,
    seq: 0,
    ts: new Date().toISOString(),
    type: "session_fork",
    data: {
      parent_session_id: parentId,
      fork_root_session_id: facts.forkRootSessionId,
      forked_to_seq: facts.toSeq,
      parent_workspace: ws,
      child_workspace: ws,
      replay_event_count: facts.eventCount,
      from_seq: facts.fromSeq,
      strategy,
      limitations: strategy === "share_v1" ? SHARE_LIMITATIONS : REPLAY_LIMITATIONS,
      prefix_digest: facts.prefixDigest,
      open_tool_calls: facts.openToolCalls,
    },
  };
}

/**
 * The parent Log `parentId` (pixir fork, pixir-fork --parent): read from its bytes when it is in our
 * layout (parent-log.ts), else through the resolving loader (parent-loader.ts).
 */
export async function parentFromLog(ws: string, parentId: string, toSeq: number | undefined, command: string, options: ParentReadOptions = {}): Promise<ParentSource> {
  const { observeInherited, checked, observeChecked } = options;
  // An observer (the summary of --summarize) is fed from the byte path's checked lines when it has a
  // form for them (observeChecked); otherwise it is fed Events, which the loader's pass makes anyway.
  const ours = observeInherited === undefined || observeChecked !== undefined ? await parentFromOurLog(ws, parentId, toSeq, { checked, onInherited: observeChecked?.() }) : null;
  if (ours !== null) return ours;
  checked?.restart();
  return parentThroughLoader(ws, parentId, toSeq, command, options);
}

/**
 * The parent History on stdin (pixir-fork without --parent): a regular file is read in place, twice
 * (parent-stdin-file.ts); when it is not all in our layout, or stdin is a pipe, it is read the pipe's
 * way (parent-pipe.ts), from where the file's input began.
 */
export async function parentFromStdin(stdin: AsyncIterable<Buffer>, toSeq: number | undefined, signal?: AbortSignal): Promise<ParentSource> {
  const fd = seekableFd(stdin);
  if (fd === null) return parentFromPipe(stdin, toSeq, signal);
  const range = { start: 0, length: 0 };
  const inPlace = await parentFromStdinFile(fd, toSeq, range);
  if (inPlace !== null) return inPlace;
  return parentFromPipe(fdRange(fd, range.start, range.length), toSeq, signal);
}

/** The fork stream of fork.md §4.1 as lines: header, then (replay_v1) the renumbered inherited Events. */
export async function* forkStreamLines(ws: string, parent: ParentSource, childId: string, strategy: ForkStrategy, header?: PixirEvent): AsyncGenerator<string> {
  const head = header ?? forkHeader(ws, parent.parentId, childId, parent.facts, strategy);
  yield serializeEvent(head);
  if (strategy === "share_v1") return;
  let k = 0;
  for await (const item of parent.inherited()) {
    k++;
    const child = inheritedItem(item, head.id!, childId, k);
    yield serializeEvent(child.event, child.dataText);
  }
}

/**
 * The same fork stream as forkStreamLines, as chunks of whole lines: the inherited lines are copied
 * from the parent's bytes when the parent allows it (ParentSource.inheritedBlocks), else made one by one.
 */
export async function* forkStreamChunks(ws: string, parent: ParentSource, childId: string, strategy: ForkStrategy): AsyncGenerator<string | Buffer> {
  const header = forkHeader(ws, parent.parentId, childId, parent.facts, strategy);
  if (strategy === "share_v1" || parent.inheritedBlocks === undefined) {
    yield* forkStreamLines(ws, parent, childId, strategy, header);
    return;
  }
  yield serializeEvent(header);
  yield* parent.inheritedBlocks(header.id!, childId);
}

/** --strategy: replay_v1 (the default) or share_v1; anything else is a usage error. */
export function parseForkStrategy(value: string | undefined, synopsis: string): ForkStrategy {
  if (value === undefined) return "replay_v1";
  if (!(FORK_STRATEGIES as readonly string[]).includes(value)) throw usageError(synopsis, "--strategy must be replay_v1 or share_v1");
  return value as ForkStrategy;
}
