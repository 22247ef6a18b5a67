#!/usr/bin/env bash
# Builds the DocC documentation of the OfflineTTL module and fails on any warning (a broken
# symbol link, an undocumented parameter that DocC checks): the docc recipe without the
# SwiftPM plugin. Output: .build/OfflineTTL.doccarchive
set -euo pipefail
cd "$(dirname "$0")/.."

swift_bin=$(dirname "$(readlink -f "$(command -v swift)")")
docc=${DOCC:-$(command -v docc || true)}
if [ -z "$docc" ] && [ -x "$swift_bin/docc" ]; then docc="$swift_bin/docc"; fi
if [ -z "$docc" ]; then
  echo "error: docc not found (looked on PATH and beside swift in $swift_bin)" >&2
  exit 1
fi

swift package dump-symbol-graph >/dev/null
triple_dir=$(swift build --show-bin-path)/..
graphs=".build/docs-symbolgraph"
rm -rf "$graphs" .build/OfflineTTL.doccarchive
mkdir -p "$graphs"
# Only the OfflineTTL module's graphs (and its extensions of other modules): one catalog, one module.
cp "$triple_dir"/symbolgraph/OfflineTTL.symbols.json "$graphs"/
cp "$triple_dir"/symbolgraph/OfflineTTL@*.symbols.json "$graphs"/ 2>/dev/null || true

"$docc" convert Sources/OfflineTTL/OfflineTTL.docc \
  --additional-symbol-graph-dir "$graphs" \
  --fallback-display-name OfflineTTL \
  --fallback-bundle-identifier org.example.OfflineTTL \
  --output-path .build/OfflineTTL.doccarchive \
  --warnings-as-errors
echo "docs: .build/OfflineTTL.doccarchive"
