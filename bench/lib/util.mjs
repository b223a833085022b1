// Small helpers shared by the benchmark scripts. No timing logic lives in unit tests.
import { spawnSync } from "node:child_process";

const UNITS = {
  "": 1,
  b: 1,
  k: 1e3,
  kb: 1e3,
  kib: 1024,
  m: 1e6,
  mb: 1e6,
  mib: 1024 ** 2,
  g: 1e9,
  gb: 1e9,
  gib: 1024 ** 3,
};

/** "1GiB", "64MiB", "500MB", "123456" → bytes. */
export function parseSize(text) {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(String(text));
  const unit = m ? UNITS[m[2].toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new Error(`not a size: ${JSON.stringify(text)} (try 1GiB, 64MiB, 500MB or a byte count)`);
  const n = Math.round(Number(m[1]) * unit);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`not a positive size: ${text}`);
  return n;
}

/** A short binary-unit label: 1073741824 → "1GiB", 67108864 → "64MiB". */
export function sizeLabel(bytes) {
  for (const [unit, n] of [["GiB", 1024 ** 3], ["MiB", 1024 ** 2], ["KiB", 1024]]) {
    if (bytes >= n && bytes % n === 0) return `${bytes / n}${unit}`;
  }
  for (const [unit, n] of [["GiB", 1024 ** 3], ["MiB", 1024 ** 2], ["KiB", 1024]]) {
    if (bytes >= n) return `${(bytes / n).toFixed(1)}${unit}`;
  }
  return `${bytes}B`;
}

/** Tiny argv parser: --flag, --flag value, --flag=value. */
export function parseArgs(argv, spec) {
  const out = {};
  for (const [k, v] of Object.entries(spec)) if (v.default !== undefined) out[k] = v.default;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") continue; // `pnpm bench -- --size 64MiB` may pass the separator through
    if (!a.startsWith("--")) throw new Error(`unexpected argument: ${a}`);
    let [name, value] = a.slice(2).split(/=(.*)/s, 2);
    const s = spec[name];
    if (!s) throw new Error(`unknown option --${name}`);
    if (s.type === "boolean") {
      if (value !== undefined) throw new Error(`--${name} takes no value`);
      out[name] = true;
      continue;
    }
    if (value === undefined) {
      if (i + 1 >= argv.length) throw new Error(`--${name} needs a value`);
      value = argv[++i];
    }
    out[name] = s.parse ? s.parse(value, name) : value;
  }
  return out;
}

export function positiveInt(value, name) {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer`);
  return n;
}

export function median(values) {
  const v = [...values].sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

export const MB = 1e6;
export const MiB = 1024 ** 2;

/**
 * One process under GNU time: its wall time (ms), peak RSS (KiB) and CPU (ms); a failure ends the bench (exit 2).
 * `options.env` adds to the environment; `options.stdout` is where its output goes ("ignore" by default).
 */
export function timed(command, argv, options = {}) {
  const start = process.hrtime.bigint();
  const r = spawnSync("/usr/bin/time", ["-f", "%M %U %S", command, ...argv], {
    encoding: "utf8",
    maxBuffer: 1024 * 1024 * 1024,
    env: { ...process.env, ...(options.env ?? {}) },
    stdio: ["ignore", options.stdout ?? "ignore", "pipe"],
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) {
    process.stderr.write(`${command} ${argv.slice(0, 3).join(" ")} … failed (exit ${r.status}):\n${r.stderr.slice(-2000)}`);
    process.exit(2);
  }
  const [rss, user, sys] = r.stderr.trim().split("\n").at(-1).split(" ").map(Number);
  return { ms, rssKib: rss, cpuMs: (user + sys) * 1000 };
}
