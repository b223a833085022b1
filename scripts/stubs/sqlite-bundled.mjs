// Bundled in place of lib/envelope/src/archive/search/sqlite-bundled.ts (scripts/build.mjs, bundledSqlite):
// better-sqlite3's JavaScript inside the tool's bundle, evaluated on first use.
import { version } from "better-sqlite3/package.json";

export const bundledSqlite = { version, load: () => require("better-sqlite3") };
