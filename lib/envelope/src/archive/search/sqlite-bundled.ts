// better-sqlite3's JavaScript as a tool's bundle carries it: none here. The tools' build replaces this
// module (scripts/build.mjs, bundledSqlite) by one that bundles the package's fourteen small modules, which
// Node would otherwise find, read and compile one by one at every search (about 5 ms of one). The native
// addon is always the installed package's.
import type Database from "better-sqlite3";

export interface BundledSqlite {
  /** The package version the bundle was built from: used only with an installed addon of that version. */
  version: string;
  load: () => typeof Database;
}

export const bundledSqlite: BundledSqlite | null = null;
