// A Codex rollout that the importer must plan whole (codex-interop.md §3.3): turns of about `turnBytes`
// each (a user message and an answer), then `rollbacks` rollbacks of one turn, each followed by a retried
// turn and one more (so the rollback children nest, and every fifth stores its prefix, replay_v1). Its
// first half of lines holds no rollback: imported first, it is streamed; the whole file then grows a
// family the planner must plan. Deterministic: the same bytes for the same arguments.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

export const ROLLBACK_THREAD = "019c8a59-e9dd-71f0-9ae3-4079fe9726b1";

/** The lines of a rollout of about `size` bytes. */
export function rolledBackRollout(size, { rollbacks = 12, turnBytes = 20000 } = {}) {
  let clock = Date.parse("2026-03-01T10:00:00.000Z");
  const ts = () => new Date((clock += 1000)).toISOString();
  const rec = (type, payload) => JSON.stringify({ timestamp: ts(), type, payload });
  const big = "x".repeat(turnBytes);
  const U = (t) => rec("response_item", { type: "message", role: "user", content: [{ type: "input_text", text: t }] });
  const A = (t) => rec("response_item", { type: "message", role: "assistant", content: [{ type: "output_text", text: t }] });
  const lines = [rec("session_meta", { id: ROLLBACK_THREAD, timestamp: "2026-03-01T10:00:00.000Z", cwd: "/w", originator: "codex-tui", cli_version: "0.125.0", source: "cli", model_provider: "openai" })];
  const tail = rollbacks * 2 * (turnBytes + 200);
  for (let i = 0, bytes = 0; bytes < size - tail; i++) {
    lines.push(U(`q${i} ${big}`), A(`a${i} ${big}`));
    bytes += 2 * (turnBytes + 200);
  }
  for (let k = 0; k < rollbacks; k++) lines.push(rec("event_msg", { type: "thread_rolled_back", num_turns: 1 }), U(`retry ${k} ${big}`), A(`answer ${k} ${big}`), U(`more ${k}`), A(`more answer ${k}`));
  return lines;
}

/** Write the rollout's first `count` lines (all when omitted) to `file`. */
export function writeRollout(file, lines, count = lines.length) {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, lines.slice(0, count).map((l) => `${l}\n`).join(""));
}

// node bench/lib/codex-rollbacks.mjs OUT_FILE MIB [ROLLBACKS [TURN_BYTES]]: the rollout of that size, for a look by hand.
if (import.meta.url === `file://${process.argv[1]}`) {
  const [out, mib, n, turn] = process.argv.slice(2);
  writeRollout(out, rolledBackRollout(Number(mib) * 1024 ** 2, { rollbacks: Number(n ?? 12), turnBytes: Number(turn ?? 20000) }));
}
