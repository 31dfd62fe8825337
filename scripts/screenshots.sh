#!/usr/bin/env bash
# Regenerates the README's screenshots (docs/images/flamegraph*.png) by running
# the browser tests (tests/browser/run.mjs) on SVGs made by the built fgtool
# from the real profiles in testdata/: normal, zoomed (into main()), searched
# (/sgemm/), categories (--colors category, with its legend) and a
# differential flamegraph. Needs scripts/setup.sh --browser and a build
# (scripts/build.sh); FGTOOL_BIN overrides build/bin/fgtool.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${FGTOOL_BIN:-build/bin/fgtool}
[ -x "$bin" ] || { echo "screenshots: $bin not found; run scripts/build.sh first" >&2; exit 2; }
[ -d tests/browser/node_modules/playwright-core ] || { echo "screenshots: run scripts/setup.sh --browser first" >&2; exit 2; }
mkdir -p docs/images
rm -f docs/images/flamegraph*.png
artifacts=$(mktemp -d)
trap 'rm -rf "$artifacts"' EXIT
node tests/browser/run.mjs --fgtool "$bin" --source "$PWD" --artifacts "$artifacts" --screenshots docs/images \
  --only load,click,search,category,diff || echo "screenshots: some browser tests failed (above); images still written"
for f in flamegraph flamegraph-zoomed flamegraph-search flamegraph-categories flamegraph-diff; do
  [ -s "docs/images/$f.png" ] || { echo "screenshots: docs/images/$f.png was not written" >&2; exit 1; }
done
ls -l docs/images/flamegraph*.png
