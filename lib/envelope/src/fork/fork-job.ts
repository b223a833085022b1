// cli.md §12.1: `pixir fork` — the same stages as `pixir-fork --parent P | [pixir-summarize |]
// pixir-log write`, composed in one process under the child's Writer Lease.
import { serializeEvent, type PixirEvent } from "../event/envelope.js";
import { branchSummaryLine, type BranchSummaryBuilder, type BranchSummaryData } from "../summary/summary.js";
import { checkBoundary, forkHeader, forkPlan, forkStreamLines, parentFromLog, type ForkPlan } from "./fork.js";
import type { ForkStrategy } from "../event/vocabulary.js";
import { LineFingerprint, parentChangedError, type ParentSource } from "./fork-plan.js";
import { recycleChildBlock } from "./child-lines.js";
import { resourceSources } from "./fork-write.js";
import { newUlid } from "../event/ids.js";
import { acquireLease } from "../store/lease.js";
import { assertShareChildDepth, type HistoryItem } from "../store/loader.js";
import { alreadyExists, createLogAtomically } from "../store/log-write.js";
import { inspectStatePath, logPath } from "../store/paths.js";
import { ByteProgress, mebibytes } from "../event/progress.js";
import { copyResources, PayloadWrites } from "../store/resources.js";

/** A stage that passes a fork stream through and appends a branch_summary (pixir-summarize). */
export type SummaryStage = (lines: AsyncIterable<string>, env: NodeJS.ProcessEnv) => AsyncIterable<string | Buffer>;

/**
 * The summary of that stage without a stream: a builder the plan's pass feeds every inherited Event,
 * and what the stage does with it at the end (finishSummary). Used when the lines are copied as bytes.
 */
export interface DirectSummary {
  builder: () => BranchSummaryBuilder;
  finish: (builder: BranchSummaryBuilder, header: PixirEvent, env: NodeJS.ProcessEnv) => Promise<BranchSummaryData>;
}

export interface ForkJob {
  parentId: string;
  childId?: string;
  toSeq?: number;
  strategy: ForkStrategy;
  strictBoundary?: boolean;
  dryRun?: boolean;
  /** With --summarize: the stage, and the strategy a dry run reports; `direct`, its summary without a stream. */
  summarize?: { stage: SummaryStage; strategy: string; direct?: DirectSummary };
  program: string;
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  /** Progress lines of a long fork (every 64 MiB checked, then copied); the caller passes it only for a terminal. */
  progress?: (text: string) => void;
}

/**
 * The parent's inherited Events, re-checked on the emitting pass: the parent is not leased, so a Log
 * rewritten between the two passes must fail the fork rather than produce a child that lies. The
 * check compares a fingerprint of the lines read, which costs a hash, not another decode.
 */
function verifiedParent(parent: ParentSource, childId: string): ParentSource {
  return {
    ...parent,
    async *inherited(): AsyncGenerator<HistoryItem> {
      const seen = new LineFingerprint();
      for await (const item of parent.inherited()) {
        seen.add(item.event, item.lineBytes ?? item.line?.bytes);
        yield item;
      }
      if (seen.count !== parent.facts.eventCount || seen.digest() !== parent.facts.fingerprint) throw parentChangedError(parent, childId, seen.count);
    },
  };
}

export async function runForkJob(ws: string, job: ForkJob): Promise<ForkPlan> {
  const direct = job.dryRun ? undefined : job.summarize?.direct;
  let builder: BranchSummaryBuilder | null = null;
  const observe =
    direct === undefined
      ? undefined
      : () => {
          const fed = (builder = direct.builder());
          return (e: PixirEvent, childSeq: number) => fed.add(e, childSeq);
        };
  // The byte path feeds a builder of its own; if it gives up, the loader's pass starts a new one.
  const observeChecked =
    direct === undefined
      ? undefined
      : () => {
          const fed = (builder = direct.builder());
          return (type: PixirEvent["type"], childSeq: number, b: Buffer, dataStart: number, dataEnd: number) => fed.addChecked(type, childSeq, b, dataStart, dataEnd);
        };
  const say = job.progress;
  const checked = say && new ByteProgress((n) => say(`checked ${mebibytes(n)} of ${job.parentId}`));
  const parent = await parentFromLog(ws, job.parentId, job.toSeq, "pixir fork", { observeInherited: observe, checked, observeChecked });
  if (job.strictBoundary) checkBoundary(parent.facts, job.toSeq);
  const childId = job.childId ?? newUlid();
  if (job.strategy === "share_v1") assertShareChildDepth(parent.history ?? null, job.parentId, childId);
  const plan = (recorded: boolean, summaryStrategy: string | null, resourceCount = parent.facts.resourceCount) =>
    forkPlan(ws, job.parentId, childId, { ...parent.facts, resourceCount }, job.strategy, { recorded, dryRun: Boolean(job.dryRun), summaryStrategy });
  if (job.dryRun) {
    // The real run reads and verifies every payload before the child exists: so does its dry run (cli.md §5).
    const refs = parent.facts.resources;
    if (job.strategy === "replay_v1" && refs.length > 0) copyResources(ws, resourceSources(parent.history ?? null, job.parentId), childId, refs, true);
    return plan(false, job.summarize?.strategy ?? null);
  }

  const child = logPath(ws, childId);
  if (inspectStatePath(child) === "present") throw alreadyExists(childId, child, true);
  const lease = await acquireLease(ws, childId, { program: job.program, env: job.env, signal: job.signal });
  // Child processes of this job (a --model-cmd) present our lease instead of competing for it.
  const childEnv = { ...job.env, PIXIR_WRITER_LEASE: lease.holderId };
  const refs = parent.facts.resources;
  let copied = 0;
  let summaryStrategy: string | null = null;
  let wrote = false;
  const payloads = new PayloadWrites();
  const copiedBytes = say && new ByteProgress((n) => say(`copied ${mebibytes(n)} to ${childId}`));
  try {
    await createLogAtomically(
      ws,
      childId,
      async (emit, emitOwned) => {
        if (parent.inheritedBlocks !== undefined && (job.summarize === undefined || builder !== null)) {
          // Nothing reads the lines on the way (the summary was fed by the plan's pass): the child's
          // copies are made from the parent's bytes.
          const header = forkHeader(ws, job.parentId, childId, parent.facts, job.strategy);
          emit(serializeEvent(header));
          if (job.strategy === "replay_v1") {
            for await (const block of parent.inheritedBlocks(header.id!, childId)) {
              await emitOwned(block, recycleChildBlock); // each block is a buffer of its own (ChildLines)
              copiedBytes?.add(block.length);
            }
          }
          if (builder !== null) {
            const data = await direct!.finish(builder, header, childEnv);
            summaryStrategy = data.strategy;
            emit(branchSummaryLine(childId, parent.facts.eventCount + 1, data));
          }
          return;
        }
        const streamed = forkStreamLines(ws, verifiedParent(parent, childId), childId, job.strategy);
        const lines: AsyncIterable<string | Buffer> = job.summarize ? job.summarize.stage(streamed, childEnv) : streamed;
        let last: string | Buffer = "";
        for await (const line of lines) {
          emit(line);
          copiedBytes?.add(typeof line === "string" ? Buffer.byteLength(line, "utf8") : line.length);
          last = line;
        }
        if (job.summarize) {
          const data = JSON.parse(last.toString()).data as Record<string, unknown>;
          summaryStrategy = typeof data.strategy === "string" ? data.strategy : job.summarize.strategy;
        }
      },
      { lease, signal: job.signal },
      () => {
        if (job.strategy === "replay_v1" && refs.length > 0) copied = copyResources(ws, resourceSources(parent.history ?? null, job.parentId), childId, refs, false, payloads);
      },
    );
    wrote = true;
  } finally {
    if (!wrote) payloads.undo(); // the child never appeared: neither do its resources
    lease.release(!wrote);
  }
  return plan(true, summaryStrategy, job.strategy === "replay_v1" ? copied : 0);
}
