// fork.md §3.1 steps 6–8 and §4.3: the data of a `share_v1` header, for an importer that builds a share
// child of a parent it holds in memory (claude-interop.md §3.4, codex-interop.md §3.4). The prefix is the
// parent's Events that the child inherits at `toSeq` (the loader's isInherited).
import { IdSet } from "../event/id-set.js";
import type { JsonObject, PixirEvent } from "../event/envelope.js";
import { PrefixDigest } from "../store/loader.js";
import { SHARE_LIMITATIONS } from "./fork.js";
import { OpenCalls } from "./fork-plan.js";

export function shareHeaderData(ws: string, parent: { id: string; forkRoot: string }, toSeq: number, inherited: readonly PixirEvent[]): JsonObject {
  const digest = new PrefixDigest();
  const open = new OpenCalls(new IdSet());
  for (const e of inherited) {
    digest.add(e);
    open.add(e);
  }
  return {
    parent_session_id: parent.id,
    fork_root_session_id: parent.forkRoot,
    forked_to_seq: toSeq,
    parent_workspace: ws,
    child_workspace: ws,
    replay_event_count: inherited.length,
    from_seq: inherited[0]?.seq ?? null,
    strategy: "share_v1",
    limitations: SHARE_LIMITATIONS,
    prefix_digest: digest.digest(),
    open_tool_calls: open.list(),
  };
}
