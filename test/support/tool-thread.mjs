// The worker thread of test/support/thread.ts: runs a built tool's main(argv, io) (tools/<tool>/dist, the
// bundle the bin runs) for each request, and wakes the waiting test thread when it is done. Plain ES
// module: Node loads it as it is, outside vitest's transform.
import { parentPort } from "node:worker_threads";
import { Readable, Writable } from "node:stream";

const mains = new Map();
async function mainOf(tool) {
  if (!mains.has(tool)) mains.set(tool, (await import(new URL(`../../tools/${tool}/dist/main.cjs`, import.meta.url).href)).main);
  return mains.get(tool);
}

function collector(chunks) {
  return new Writable({
    write(chunk, encoding, done) {
      chunks.push(typeof chunk === "string" ? Buffer.from(chunk, encoding) : Buffer.from(chunk));
      done();
    },
  });
}

parentPort.on("message", async ({ tool, argv, cwd, input, env, port, flag }) => {
  const out = [];
  const err = [];
  let code;
  // What a process start gives a command: its own environment (read as process.env by a few modules).
  for (const k of Object.keys(process.env)) delete process.env[k];
  Object.assign(process.env, env);
  try {
    const stdin = Readable.from(input.length === 0 ? [] : [Buffer.from(input)]);
    code = await (await mainOf(tool))(argv, { stdin, stdout: collector(out), stderr: collector(err), env, cwd });
  } catch (thrown) {
    // What node prints for an uncaught error, and its exit status.
    err.push(Buffer.from(`${thrown?.stack ?? String(thrown)}\n`));
    code = 1;
  }
  port.postMessage({ code, stdout: Buffer.concat(out), stderr: Buffer.concat(err) });
  port.close();
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
});
