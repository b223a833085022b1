// Hand-written fork children for the tree tests (fork.md §4), without going through pixir fork.
import { rawLine, writeRaw, type Ev } from "./cli.js";
import { prefixDigest } from "./fork.js";
import { REPLAY_TYPES } from "../../lib/envelope/src/event/vocabulary.js";

const REPLAY = new Set<string>(REPLAY_TYPES);

/** The stored Events of R(id; …), as written by writeRaw. */
const stored = (id: string, events: Ev[]) => events.map((e, n) => JSON.parse(rawLine(id, n, e)));

export interface ForkSpec {
  child: string;
  parent: string;
  parentEvents: Ev[];
  toSeq: number;
  strategy?: "replay_v1" | "share_v1";
  own?: Ev[];
  root?: string;
}

/** A hand-written fork child (fork.md §4): a session_fork header at seq 0, the inherited prefix (replay_v1 only), then own Events. */
export function writeFork(ws: string, spec: ForkSpec): void {
  const strategy = spec.strategy ?? "replay_v1";
  const inherited = stored(spec.parent, spec.parentEvents).filter((e) => REPLAY.has(e.type) && e.seq !== null && e.seq <= spec.toSeq);
  const header: Ev = {
    type: "session_fork",
    seq: 0,
    ts: "2026-07-01T00:00:00Z",
    data: {
      parent_session_id: spec.parent,
      fork_root_session_id: spec.root ?? spec.parent,
      forked_to_seq: spec.toSeq,
      parent_workspace: ws,
      child_workspace: ws,
      replay_event_count: inherited.length,
      from_seq: inherited[0]?.seq ?? null,
      strategy,
      limitations: ["test"],
      prefix_digest: prefixDigest(inherited),
      open_tool_calls: [],
    },
  };
  const copied: Ev[] = strategy === "replay_v1" ? inherited.map((e, k) => ({ type: e.type, data: e.data, ts: e.ts, seq: k + 1 })) : [];
  const n = inherited.length;
  const own = (spec.own ?? []).map((e, i) => ({ seq: n + 1 + i, ts: `2026-07-02T00:00:${String(i).padStart(2, "0")}Z`, ...e }));
  writeRaw(ws, spec.child, [header, ...copied, ...own]);
}

