// Bundled in place of node:crypto (scripts/build.mjs, lazyCrypto): the module is loaded at the first call.
// A static import of it loads it, and through its ES module face every lazy part of it (Web Crypto too), at
// the start of every process whose bundle names it: 2–4 ms of a search, which hashes nothing when no Log
// changed. The bundles ask it only for these (an ES import of another name fails the build).
import { createRequire } from "node:module";

let crypto;
const load = () => (crypto ??= createRequire(import.meta.url)("node:crypto"));

export const createHash = (...args) => load().createHash(...args);
export const hash = (...args) => load().hash(...args);
export const randomBytes = (...args) => load().randomBytes(...args);

/** The default export, as ulid reads it (`crypto.randomBytes`, when no Web Crypto is found). */
export default {
  get randomBytes() {
    return load().randomBytes;
  },
};
