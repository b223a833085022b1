// codex-interop.md §5.4: native Events converted to rollout lines, one Event at a time. A checkpoint's
// `replacement_history` holds the items of Events before it: when E's seqs rise (every Log pixir writes),
// they are gathered while E is read, for the checkpoints still ahead whose range they fall in, so E is read
// once; otherwise E is read again for each checkpoint.
import { isJsonObject, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { checkpointToSeqOf } from "../../session/context.js";
import { isTerminalSubagent, renderBranchSummaryText, renderCheckpointText, renderSkillActivation, renderSubagent, withAttachedResources } from "../../summary/render.js";
import { jason, str, termOfJs, type TermObject } from "../../event/elixir.js";
import { codexOf } from "./rebuild.js";
import { carriesItem } from "./line-map.js";

/** The Codex item a line Event carries (§3.3), or null. */
function codexItemOf(e: PixirEvent): unknown {
  const c = codexOf(e);
  if (c === null || !carriesItem(e.data)) return null;
  if (typeof c.part === "string") return Object.hasOwn(c, "item") ? c.item : e.data.item;
  const record = c.record as JsonObject;
  return record.payload === "$item" ? e.data.item : record.payload;
}

const userItem = (text: string): JsonObject => ({ type: "message", role: "user", content: [{ type: "input_text", text }] });

/** E, the Log's resolved History, read again from its start. */
export type HistoryEvents = () => AsyncIterable<PixirEvent>;

/**
 * §5.4 `history_compaction` when E's seqs do not rise: the items of the Events of E after the checkpoint's
 * range and before it, read again from the Log. A checkpoint among them gives no item (its lines are a
 * `compacted` record and an `event_msg`, not response items), so it is not converted for them.
 */
async function convertCheckpointAgain(e: PixirEvent, writtenCalls: Set<string>, history: HistoryEvents): Promise<JsonObject[] | null> {
  const d = e.data;
  const to = checkpointToSeqOf(e);
  if (to === null) return null;
  const kept: unknown[] = [userItem(renderCheckpointText(d))];
  const calls = new Set(writtenCalls);
  for await (const k of history()) {
    if (k.seq === null || k.seq <= to || k.seq >= (e.seq ?? -1)) continue;
    if (codexOf(k) !== null) {
      const item = codexItemOf(k);
      if (item !== null) kept.push(item);
    } else if (k.type !== "history_compaction") {
      for (const l of convertPlain(k, calls) ?? []) if (l.type === "response_item") kept.push(l.payload);
    }
  }
  return checkpointLines(e, kept);
}

function checkpointLines(e: PixirEvent, kept: unknown[]): JsonObject[] {
  const summary = str(termOfJs(e.data.summary));
  return [
    { type: "compacted", payload: { message: summary, replacement_history: kept } },
    { type: "event_msg", payload: { type: "context_compacted" } },
  ];
}

/** §5.4 for every Event but a checkpoint. */
function convertPlain(e: PixirEvent, writtenCalls: Set<string>): JsonObject[] | null {
  const d = e.data;
  switch (e.type) {
    case "branch_summary":
      return [{ type: "response_item", payload: userItem(renderBranchSummaryText(d)) }];
    case "user_message": {
      // The text of a replayed user turn (context-and-compaction.md §1.5).
      const resources = d.resources;
      const text = Array.isArray(resources) && resources.length > 0 ? withAttachedResources(termOfJs(d.text ?? ""), resources.map(termOfJs)) : typeof d.text === "string" ? d.text : "";
      return [
        { type: "response_item", payload: { type: "message", role: "user", content: [{ type: "input_text", text }] } },
        { type: "event_msg", payload: { type: "user_message", message: text, images: [], local_images: [], text_elements: [] } },
      ];
    }
    case "assistant_message":
      if (typeof d.text !== "string" || (isJsonObject(d.metadata) && d.metadata.partial === true)) return null;
      return [{ type: "response_item", payload: { type: "message", role: "assistant", content: [{ type: "output_text", text: d.text }] } }];
    case "reasoning":
      if (isJsonObject(d.item) && (d.item.type === "reasoning" || d.item.type === "compaction") && (d.dialect === "codex" || d.dialect === "openai")) return [{ type: "response_item", payload: d.item }];
      return null;
    case "tool_call": {
      if (typeof d.call_id !== "string" || !Object.hasOwn(d, "name")) return null;
      writtenCalls.add(d.call_id);
      const args = d.args === undefined || d.args === null || d.args === false ? {} : d.args;
      return [{ type: "response_item", payload: { type: "function_call", name: d.name, arguments: jason(termOfJs(args)), call_id: d.call_id } }];
    }
    case "tool_result": {
      if (typeof d.call_id !== "string" || !writtenCalls.has(d.call_id)) return null;
      const { call_id: _omit, ...rest } = d;
      return [{ type: "response_item", payload: { type: "function_call_output", call_id: d.call_id, output: typeof d.output === "string" ? d.output : jason(termOfJs(rest)) } }];
    }
    case "skill_activation":
      return [{ type: "response_item", payload: userItem(renderSkillActivation(termOfJs(d) as TermObject)) }];
    case "subagent_event": {
      const data = termOfJs(d) as TermObject;
      return isTerminalSubagent(data) ? [{ type: "response_item", payload: userItem(renderSubagent(data)) }] : null;
    }
    default:
      return null;
  }
}

/** A checkpoint E holds: its index in E, its seq, and the seq its range ends at. */
export interface TailCheckpoint {
  index: number;
  seq: number;
  to: number;
  /** Not an imported Event: a fork converts only native Events. */
  native: boolean;
}

/** Which Events of E the tail is (§5.3), and what the first read learned of E's checkpoints. */
export interface TailShape {
  /** Events at index ≤ last are not converted; -1 converts from the first. */
  last: number;
  /** Every Event after `last` is converted (a new rollout), not only the native ones. */
  all: boolean;
  /** E's seqs rise: a checkpoint's kept Events all come before it. */
  rising: boolean;
  checkpoints: TailCheckpoint[];
}

/** An item a checkpoint keeps; a function call's output only when its call was written before the checkpoint. */
interface Kept {
  item: unknown;
  call?: string;
}

const responseItems = (lines: JsonObject[] | null): unknown[] => (lines ?? []).filter((l) => l.type === "response_item").map((l) => l.payload);

/**
 * What Event k gives a checkpoint that keeps it (§5.4): a line Event its Codex item, a native Event the
 * items of its conversion. A result's call is checked at the checkpoint: every native Event before the
 * checkpoint is in the tail, so the calls written by then are the calls the plain rule sees.
 */
function keptOf(k: PixirEvent): Kept[] {
  if (codexOf(k) !== null) {
    const item = codexItemOf(k);
    return item === null ? [] : [{ item }];
  }
  if (k.type === "history_compaction") return [];
  const call = k.type === "tool_result" && typeof k.data.call_id === "string" ? k.data.call_id : undefined;
  return responseItems(convertPlain(k, new Set(call === undefined ? [] : [call]))).map((item) => (call === undefined ? { item } : { item, call }));
}

/** The checkpoints ahead, each gathering the items of the Events in its range (to, seq). */
class Windows {
  private open: Array<TailCheckpoint & { kept: Kept[] }>;
  constructor(checkpoints: TailCheckpoint[]) {
    this.open = checkpoints.map((c) => ({ ...c, kept: [] }));
  }
  see(e: PixirEvent): void {
    if (e.seq === null || this.open.length === 0) return;
    let kept: Kept[] | undefined;
    for (const w of this.open) if (w.to < e.seq && e.seq < w.seq) w.kept.push(...(kept ??= keptOf(e)));
  }
  /** The items checkpoint `index` keeps, its window closed. */
  take(index: number, written: Set<string>): unknown[] {
    const at = this.open.findIndex((w) => w.index === index);
    if (at === -1) return [];
    const [w] = this.open.splice(at, 1);
    return w!.kept.filter((k) => k.call === undefined || written.has(k.call)).map((k) => k.item);
  }
}

/** What converting the tail gave: the lines written, the Events converted, and those left out, by type. */
export interface TailTally {
  lineCount: number;
  convertedEventCount: number;
  omitted: Record<string, number>;
}

/** §5.3 "Converted lines": the tail of E, in History order, each line (with its newline) made as it is read; `tally` counts them. */
export async function* convertTail(events: HistoryEvents, tail: TailShape, tally: TailTally): AsyncGenerator<string> {
  const written = new Set<string>();
  const windows = tail.rising ? new Windows(tail.checkpoints.filter((c) => c.index > tail.last && (tail.all || c.native))) : null;
  let i = -1;
  for await (const e of events()) {
    windows?.see(e);
    if (++i <= tail.last || (!tail.all && codexOf(e) !== null)) continue;
    let lines: JsonObject[] | null;
    if (e.type !== "history_compaction") lines = convertPlain(e, written);
    else if (windows === null) lines = await convertCheckpointAgain(e, written, events);
    else lines = checkpointToSeqOf(e) === null ? null : checkpointLines(e, [userItem(renderCheckpointText(e.data)), ...windows.take(i, written)]);
    if (lines === null) {
      tally.omitted[e.type] = (tally.omitted[e.type] ?? 0) + 1;
      continue;
    }
    tally.convertedEventCount++;
    for (const l of lines) {
      tally.lineCount++;
      yield `${JSON.stringify({ timestamp: e.ts, type: l.type, payload: l.payload })}\n`;
    }
  }
}
