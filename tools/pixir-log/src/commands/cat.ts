// pixir-log cat (cli.md §8.1): stream a Session's resolved History.
import {
  abortable,
  assertSessionId,
  boolFlag,
  decodeLogLine,
  LineDecoder,
  errorEnvelope,
  errorText,
  headLines,
  isCanonicalType,
  isLineProblem,
  LineBuffer,
  listFlag,
  notFoundError,
  openHistory,
  parseNonNegativeInt,
  PixirError,
  rangeCheckStats,
  scanLog,
  scannedBytes,
  serializeEvent,
  splitLines,
  stringFlag,
  usageError,
  type CommandContext,
  type LineProblem,
  type ParsedArgs,
  type PixirEvent,
  type ProblemHandler,
} from "@pixir/envelope";

const NEWLINE = Buffer.from("\n");

export async function runCat(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const id = args.positionals[0];
  assertSessionId(id);
  const fromSeq = parseNonNegativeInt("from-seq", stringFlag(args, "from-seq"), ctx.synopsis);
  const toSeq = parseNonNegativeInt("to-seq", stringFlag(args, "to-seq"), ctx.synopsis);
  const lenient = boolFlag(args, "lenient");
  if (boolFlag(args, "exit-zero") && !lenient) throw usageError(ctx.synopsis, "--exit-zero requires --lenient");
  const types = new Set<string>();
  for (const t of listFlag(args, "type").flatMap((v) => v.split(","))) {
    if (!isCanonicalType(t)) {
      throw new PixirError("invalid_args", "--type must name canonical event types", { field: "type", reason: "unknown_event_type", next_actions: ["pass one or more of the 14 canonical types"] });
    }
    types.add(t);
  }
  const filtered = fromSeq !== undefined || toSeq !== undefined || types.size > 0;
  const keep = (e: PixirEvent): boolean => {
    if (types.size > 0 && !types.has(e.type)) return false;
    if (fromSeq === undefined && toSeq === undefined) return true;
    if (e.seq === null) return false;
    return (fromSeq === undefined || e.seq >= fromSeq) && (toSeq === undefined || e.seq <= toSeq);
  };

  const ws = ctx.workspace();
  const skipped: number[] = [];
  const onProblem: ProblemHandler | undefined = lenient
    ? (problem: LineProblem, raw) => {
        skipped.push(raw.lineNo);
        ctx.warn("corrupt_log_line", `line ${raw.lineNo}: ${problem.reason}`, { line: raw.lineNo, reason: problem.reason });
        return "skip";
      }
    : undefined;
  const out = new LineBuffer(ctx.out);
  const quiet: ProblemHandler = () => "skip";
  const raw = boolFlag(args, "raw");
  // --raw shows the physical lines: it validates them but resolves no fork lineage (cli.md §8.1).
  const scan = raw ? await scanLog(ws, id, { onProblem }) : null;
  if (scan !== null && !scan.exists) throw notFoundError(id, ws, scan.path.rel);
  const history = raw ? null : await openHistory(ws, id, { onProblem });

  if (scan !== null) {
    // Physical lines in file order; the checking pass above already validated them.
    const decoder = new LineDecoder();
    for await (const raw of abortable(splitLines(scannedBytes(scan), { path: scan.path.rel }), ctx.signal)) {
      if (out.closed) break;
      if (lenient && skipped.includes(raw.lineNo)) continue;
      if (filtered) {
        const d = decodeLogLine(raw.bytes, !raw.terminated, decoder);
        if (isLineProblem(d) || !keep(d.event)) continue;
      }
      await out.push(raw.bytes);
      await out.push(NEWLINE);
    }
  } else if (history !== null && !filtered && history.share === null && history.scan.passThrough && history.scan.inOrder) {
    // Fast path: every stored line already is its own output line.
    for await (const chunk of abortable(scannedBytes(history.scan), ctx.signal)) {
      if (out.closed) break;
      await out.push(chunk as Buffer);
    }
  } else if (history !== null && history.share === null && history.scan.passThrough && history.scan.inOrder) {
    // Filtering a Log of exact lines: type and seq come from each line's head, the line goes out as is.
    for await (const line of abortable(headLines(history.scan), ctx.signal)) {
      if (out.closed) break;
      if (!keep(line.event)) continue;
      await out.push(line.bytes);
      await out.push(NEWLINE);
    }
  } else if (history !== null) {
    for await (const item of abortable(history.items(lenient ? quiet : undefined), ctx.signal)) {
      if (out.closed) break;
      if (!keep(item.event)) continue;
      if (item.line?.exact) {
        await out.push(item.line.bytes);
        await out.push(NEWLINE);
      } else {
        await out.push(serializeEvent(item.event, item.dataText));
      }
    }
  }
  await out.flush();
  if (ctx.io.env.PIXIR_DEBUG === "1") ctx.io.stderr.write(`${ctx.program}: checked ${rangeCheckStats.ranges} ranges; workers checked ${rangeCheckStats.byWorkers}\n`);

  if (skipped.length > 0) {
    const err = new PixirError("corrupt_log_line", `skipped ${skipped.length} corrupt log lines`, {
      skipped: skipped.length,
      lines: skipped.slice(0, 20),
      path: (scan ?? history!.scan).path.rel,
    });
    if (boolFlag(args, "exit-zero")) {
      ctx.warn("corrupt_log_line", err.message, err.details);
      return 0;
    }
    ctx.io.stderr.write(ctx.json ? `${JSON.stringify(errorEnvelope(err))}\n` : errorText(err));
    return 1;
  }
  return 0;
}
