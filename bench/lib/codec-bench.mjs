#!/usr/bin/env node
// One codec measurement in a fresh process (so each gets its own heap and its own peak RSS):
//   node bench/lib/codec-bench.mjs <impl> FILE
// impl:
//   pixir        splitLines (lib/envelope codec, raw bytes) + JSON.parse of each line
//   pixir-decode splitLines + decodeLogLine: the full §7 line check readers run (UTF-8, JSON, shape)
//   split2       split2 (decodes to strings, splits on \n) with JSON.parse as its mapper
//   ndjson       the ndjson package's parse() stream (split2 + JSON.parse inside)
// All read the file with the same fs.createReadStream chunk size, 1 MiB, so only the splitting differs.
// Prints one JSON line: {impl, events, bytes, seconds}.
import { createReadStream, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const CHUNK = 1024 * 1024;

const [impl, file] = process.argv.slice(2);
if (!impl || !file) {
  process.stderr.write("usage: node bench/lib/codec-bench.mjs <pixir|pixir-decode|split2|ndjson> FILE\n");
  process.exit(2);
}

async function loadImpl(name) {
  switch (name) {
    case "pixir":
    case "pixir-decode": {
      const lib = await import(process.env.PIXIR_BENCH_ENVELOPE || path.join(root, "lib/envelope/dist/index.js"));
      if (name === "pixir") {
        return async (stream) => {
          let n = 0;
          for await (const line of lib.splitLines(stream, { path: file })) {
            JSON.parse(line.bytes.toString("utf8"));
            n++;
          }
          return n;
        };
      }
      return async (stream) => {
        let n = 0;
        const decoder = new lib.LineDecoder();
        for await (const line of lib.splitLines(stream, { path: file })) {
          const d = lib.decodeLogLine(line.bytes, !line.terminated, decoder);
          if (lib.isLineProblem(d)) throw new Error(`line ${line.lineNo}: ${d.reason}`);
          n++;
        }
        return n;
      };
    }
    case "split2": {
      const split2 = (await import("split2")).default;
      return async (stream) => {
        let n = 0;
        for await (const _value of stream.pipe(split2(JSON.parse))) n++;
        return n;
      };
    }
    case "ndjson": {
      const ndjson = (await import("ndjson")).default;
      return async (stream) => {
        let n = 0;
        for await (const _value of stream.pipe(ndjson.parse())) n++;
        return n;
      };
    }
    default:
      throw new Error(`unknown impl ${name}`);
  }
}

const run = await loadImpl(impl);
const bytes = statSync(file).size;
const t0 = process.hrtime.bigint();
const events = await run(createReadStream(file, { highWaterMark: CHUNK }));
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
process.stdout.write(`${JSON.stringify({ impl, events, bytes, seconds })}\n`);
