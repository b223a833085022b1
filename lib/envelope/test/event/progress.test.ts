import { describe, expect, it } from "vitest";
import { ByteProgress, mebibytes } from "../../src/event/progress.js";

describe("ByteProgress", () => {
  it("reports once each time another step has gone by, however the bytes arrive", () => {
    const said: number[] = [];
    const p = new ByteProgress((n) => said.push(n), 100);
    for (let i = 0; i < 30; i++) p.add(10); // 300 bytes in small pieces
    expect(said).toEqual([100, 200, 300]);
    p.add(250); // one large piece passes two steps: one line, and the next is the step after it
    expect(said).toEqual([100, 200, 300, 550]);
    p.add(49);
    expect(said).toHaveLength(4);
    p.add(1);
    expect(said.at(-1)).toBe(600);
  });

  it("after restart() counts from zero again without repeating a line already said", () => {
    const said: number[] = [];
    const p = new ByteProgress((n) => said.push(n), 100);
    p.add(250); // a pass gets past two steps, then starts over (pixir fork's fallback to the loader)
    p.restart();
    p.add(150);
    expect(said).toEqual([250]);
    p.add(150); // 300: past the step after the last line said
    expect(said).toEqual([250, 300]);
  });

  it("prints whole mebibytes", () => {
    expect(mebibytes(64 * 1024 * 1024)).toBe("64 MiB");
    expect(mebibytes(64 * 1024 * 1024 + 5)).toBe("64 MiB");
    expect(mebibytes(0)).toBe("0 MiB");
  });
});
