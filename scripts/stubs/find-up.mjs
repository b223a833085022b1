// Bundled in place of escalade/sync, yargs' findUp. yargs' constructor looks for the nearest package.json
// to guess a version (every tool gives its own) and for a "yargs" section (pkgConf, which we do not use):
// on every start, a listing of each directory from the bundle up to the first package.json and a read.
// The empty path it gets instead fails to read at once, and yargs falls back to its defaults (undefined
// would fail an assertion first, whose message costs more than the search).
export default function findUp() {
  return "";
}
