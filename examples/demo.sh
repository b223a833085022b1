#!/usr/bin/env bash
# The Quick start's main job: fork the bundled example Session with a branch summary, then show the
# Session Tree and the child's model-visible context, and write the family's web page. Works on a copy;
# the repository stays clean.
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
