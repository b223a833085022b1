// Derived ids are spec'd (envelope-and-log.md §4): time from Date.parse of the ts, then the SHA-256 of the key,
// the same from a key's bytes in a larger buffer as from the key itself.
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { derivedUlid, derivedUlidInto } from "../../src/event/ids.js";

describe("derivedUlidInto of a key in a larger buffer", () => {
  it("is derivedUlid of the key the bytes spell, for keys of every length up to three SHA-256 blocks", () => {
    const scratch = new Uint8Array(300).fill(0x78); // bytes past the key's length must not count
    const out = Buffer.alloc(26);
    for (let n = 0; n <= 200; n++) {
      const key = `fork:01JZZZZZZZZZZZZZZZZZZZZZZZ:${"9".repeat(n % 12)}é${"x".repeat(n)}`;
      const length = Buffer.from(key, "utf8").copy(scratch);
      const ts = n % 3 === 0 ? "" : "2026-07-20T10:02:53.700Z";
      const line = Buffer.from(ts);
      derivedUlidInto(out, 0, scratch, length, line, 0, line.length);
      expect(out.toString("latin1")).toBe(derivedUlid(key, ts));
    }
  });
});

describe("derivedUlidInto", () => {
  /** derivedUlidInto of `key`, with `ts` as the UTF-8 bytes of a line around it, as a string. */
  const into = (key: string, ts: string) => {
    const k = Buffer.from(key, "utf8");
    const line = Buffer.from(`{"ts":"${ts}","x":1}`, "utf8");
    const out = Buffer.alloc(30, 0x2a);
    derivedUlidInto(out, 2, k, k.length, line, 7, 7 + Buffer.byteLength(ts, "utf8"));
    expect([out.toString("latin1", 0, 2), out.toString("latin1", 28)]).toEqual(["**", "**"]); // nothing outside its 26 bytes
    return out.toString("latin1", 2, 28);
  };

  it("writes derivedUlid's characters, reading the ts from bytes as Date.parse reads its text", () => {
    const digit = fc.integer({ min: 0, max: 9 }).map(String);
    const two = fc.tuple(digit, digit).map(([a, b]) => a + b);
    // Few dates and hours, so that the hour remembered from the line before is often the same one, and often not.
    const ts = fc
      .tuple(fc.constantFrom("2026-07-20", "2024-02-29", "2023-02-29", "2026-13-01", "+02026-01-01", "2026-07-2é"), fc.constantFrom("00", "10", "23", "24", "3x"), two, two, two, digit, fc.constantFrom("Z", "Z", "z"))
      .map(([d, h, m, s, ms2, ms1, z]) => `${d}T${h}:${m}:${s}.${ms2}${ms1}${z}`);
    fc.assert(fc.property(ts, fc.nat(99), (t, k) => into(`fork:H:${k}`, t) === derivedUlid(`fork:H:${k}`, t)), { numRuns: 3000 });
    for (const t of ["2026-07-20T24:00:00.000Z", "2026-07-20T24:30:00.000Z", "2026-07-20T23:59:59.999Z", "x", "", "2026-07-20T10:02:53Z", "2026-07-20T10:02:53.700Z"]) {
      expect(into("fork:H:1", t), t).toBe(derivedUlid("fork:H:1", t));
    }
  });
});

describe("derivedUlid", () => {
  it("is the spec's derivation: time from ts, then the first 80 bits of sha256(key)", () => {
    const key = "fork:01KXZFFP80P9FFG2MV6KW2MHHJ:17";
    const id = derivedUlid(key, "2026-07-20T10:02:53.700Z");
    expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    const bits = BigInt(`0x${createHash("sha256").update(key).digest("hex").slice(0, 20)}`);
    let tail = "";
    for (let i = 15; i >= 0; i--) tail += "0123456789ABCDEFGHJKMNPQRSTVWXYZ"[Number((bits >> BigInt(i * 5)) & 31n)];
    expect(id.slice(10)).toBe(tail);
    let t = Date.parse("2026-07-20T10:02:53.700Z");
    let time = "";
    for (let i = 0; i < 10; i++, t = Math.floor(t / 32)) time = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"[t % 32] + time;
    expect(id.slice(0, 10)).toBe(time);
    // A non-ASCII key and a key longer than the in-process buffer take the other routes to the same digest.
    for (const k of ["pi:é✓🙂:x", "k".repeat(5000)]) {
      const want = BigInt(`0x${createHash("sha256").update(k, "utf8").digest("hex").slice(0, 20)}`);
      const got = derivedUlid(k, null).slice(10);
      let w = "";
      for (let i = 15; i >= 0; i--) w += "0123456789ABCDEFGHJKMNPQRSTVWXYZ"[Number((want >> BigInt(i * 5)) & 31n)];
      expect(got).toBe(w);
    }
  });
});
