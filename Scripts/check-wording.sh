#!/usr/bin/env bash
# Fails when a tracked file cites working notes that users of this repository never have, or
# calls a rule by where it came from instead of by its name. The rules are stated in the DocC
# article Sources/OfflineTTL/OfflineTTL.docc/Rules.md; link it (<doc:Rules#...>) or say the rule.
# A random generator's or a checksum's seed is fine: only these phrasings are refused.
set -euo pipefail
cd "$(dirname "$0")/.."
pattern='DESIGN rule|STYLE [0-9]|PLATFORM\.md|DESIGN\.md|STYLE\.md|the seed|seed'"'"'s|seed-only|seedOnly|seed alone|SeedModel|SeedAlone|SeedScenario'
if hits=$(git grep -nIiE "$pattern" -- . ':!Scripts/check-wording.sh'); then
  echo "error: these lines cite working notes or 'the seed'; state the rule or link <doc:Rules>:" >&2
  echo "$hits" >&2
  exit 1
fi
echo "wording: no citations of working notes"
