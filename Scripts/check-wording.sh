#!/usr/bin/env bash
# Fails when a tracked file cites working notes that users of this repository never have, or
# calls a rule by where it came from instead of by its name. The rules are stated in the DocC
# article Sources/OfflineTTL/OfflineTTL.docc/Rules.md; link it (<doc:Rules#...>) or say the rule.
# A random generator's or a checksum's seed is fine: only these phrasings are refused.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each word is written with a bracket class (DESIGN[ ]rule) so that this script does not match itself.
pattern='DESIGN[ ]rule|STYLE[ ][0-9]|PLATFORM[.]md|DESIGN[.]md|STYLE[.]md|the[ ]seed|seed['"'"']s|seed[-]only|seed[O]nly|seed[ ]alone|Seed[M]odel|Seed[A]lone|Seed[S]cenario'
if hits=$(git grep -nIiE "$pattern" -- .); then
  echo "error: these lines cite working notes or the source material; state the rule or link <doc:Rules>:" >&2
  echo "$hits" >&2
  exit 1
fi
echo "wording: no citations of working notes"
