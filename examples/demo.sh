#!/usr/bin/env bash
# The Quick start's main job: fork the bundled example Session with a branch summary, then show the
# Session Tree and the child's model-visible context, and write the family's web page. Then the archive:
# the real Claude Code and Codex sessions bundled as test fixtures imported into a Workspace of their own,
# found, searched, counted and written as a site. Works on copies; the repository stays clean.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$root/node_modules/.bin:$PATH"
ws=$(mktemp -d "${TMPDIR:-/tmp}/pixir-demo.XXXXXX")
cp -R "$root/examples/workspace/." "$ws/"
cd "$ws"
step() { printf '\n$ %s\n' "$*"; "$@"; }
printf 'Example Workspace (a copy): %s\n' "$ws"
step pixir log ls
step pixir fork demo --to-seq 8 --summarize --child-id demo-utc-fix
step pixir tree demo
step pixir context demo-utc-fix --format text
step pixir export html demo-utc-fix --out "$ws/demo-family.html"
printf '\nThe web page of the demo family (open it in a browser; it needs no server):\n  %s\n' "file://$ws/demo-family.html"

archive="$ws/archive"
mkdir -p "$archive"
cd "$archive"
printf '\nAn archive: the real Claude Code and Codex sessions of test/fixtures/real-sessions, imported into %s\n' "$archive"
step pixir import claude "$root/test/fixtures/real-sessions/claude" --json >/dev/null
step pixir import codex "$root/test/fixtures/real-sessions/codex" --json >/dev/null
step pixir ls --limit 8
step pixir search timeline filtering --limit 4
step pixir usage --by model
step pixir export html --all --out "$archive/site"
printf '\nThe site of the archive (open it in a browser; it needs no server):\n  %s\n' "file://$archive/site/index.html"
