#!/usr/bin/env bash
# Builds the DocC documentation of every library product and fails on any warning (a broken
# symbol link, an undocumented parameter that DocC checks), with docc from the toolchain and no
# SwiftPM plugin. Works on a fresh clone as the first command.
#
# Output: .build/<Module>.doccarchive for OfflineTTL, OfflineTTLTestDoubles, OfflineTTLTesting and, when their traits
# can be built (as Scripts/test.sh decides), OfflineTTLSecretService and OfflineTTLTPM; a module
# whose trait is off is skipped with one line saying why.
set -euo pipefail
cd "$(dirname "$0")/.."

swift_bin=$(dirname "$(readlink -f "$(command -v swift)")")
docc=${DOCC:-$(command -v docc || true)}
if [ -z "$docc" ] && [ -x "$swift_bin/docc" ]; then docc="$swift_bin/docc"; fi
if [ -z "$docc" ]; then
  echo "error: docc not found (looked on PATH and beside swift in $swift_bin)" >&2
  exit 1
fi

# The traits Scripts/test.sh builds with, decided the same way, so that one build serves both.
modules=(OfflineTTL OfflineTTLTestDoubles OfflineTTLTesting)
enabled=()
if command -v pkg-config >/dev/null && pkg-config --exists libsecret-1; then
  enabled+=(SecretService)
  modules+=(OfflineTTLSecretService)
else
  echo "docs: OfflineTTLSecretService skipped: libsecret-1 not found by pkg-config (Debian: libsecret-1-dev); without the SecretService trait the module is empty"
fi
if command -v pkg-config >/dev/null && pkg-config --exists tss2-esys tss2-tctildr tss2-rc; then
  enabled+=(TPM)
  modules+=(OfflineTTLTPM)
else
  echo "docs: OfflineTTLTPM skipped: tss2-esys not found by pkg-config (Debian: libtss2-dev); without the TPM trait the module is empty"
fi
traits=()
if [ ${#enabled[@]} -ne 0 ]; then traits=(--traits "$(IFS=,; echo "${enabled[*]}")"); fi

# `swift package dump-symbol-graph` extracts the graph of every module of the package, test
# modules and executables included, and fails on a module that was never built; on a fresh clone
# only the libraries are. So build what Scripts/test.sh builds, with the same traits (after it,
# this is a no-op; with other traits, everything would be rebuilt twice).
swift build --build-tests "${traits[@]}"
swift package "${traits[@]}" dump-symbol-graph >/dev/null
triple_dir=$(swift build --show-bin-path "${traits[@]}")/..

for module in "${modules[@]}"; do
  graphs=".build/docs-symbolgraph/$module"
  rm -rf "$graphs" ".build/$module.doccarchive"
  mkdir -p "$graphs"
  # Only this module's graphs (and its extensions of other modules): one catalog, one module.
  cp "$triple_dir/symbolgraph/$module.symbols.json" "$graphs"/
  cp "$triple_dir/symbolgraph/$module"@*.symbols.json "$graphs"/ 2>/dev/null || true
  "$docc" convert "Sources/$module/$module.docc" \
    --additional-symbol-graph-dir "$graphs" \
    --fallback-display-name "$module" \
    --fallback-bundle-identifier "org.example.$module" \
    --output-path ".build/$module.doccarchive" \
    --warnings-as-errors
  echo "docs: .build/$module.doccarchive"
done
