#!/usr/bin/env bash
# Model-checks the mark protocol and the sign-in protocol with spin (Debian package `spin`).
#
# Every positive model must be proved: pan reports `errors: 0` and writes no trail. Every
# negative model (the protocol with one safeguard removed) must fail: pan reports `errors: 1` or
# more and writes a trail. pan exits 0 either way, so this script reads its report. Prints the
# state count and duration of each run, and the total. The models and what each property means:
# Models/*.pml and docs/sign-in-protocol.md.
#
# Usage: Scripts/model-check.sh            (needs spin and a C compiler)
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in spin cc; do
  if ! command -v "$tool" >/dev/null; then
    echo "error: $tool is not installed (Debian: spin, gcc)" >&2
    exit 1
  fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp Models/*.pml "$work/"
started=$(date +%s.%N)
lanes=${MODEL_CHECK_LANES:-2} # runs at once (one per core)

# check <expect: pass|fail> <name> <model file> <pan mode: safety|ltl:NAME> [spin -D flags...]
# Writes one result line to $work/<name>/result; a failure also leaves $work/<name>/failed.
check() {
  local expect=$1 name=$2 model=$3 mode=$4
  shift 4
  local dir="$work/$name"
  mkdir -p "$dir"
  cp "$work/$model" "$dir/"
  local t0 t1 report errors states verdict
  t0=$(date +%s.%N)
  (
    cd "$dir"
    spin -a "$@" "$model" >spin.log 2>&1
    if [ "$mode" = safety ]; then
      cc -O1 -DSAFETY -DNOCLAIM -DCOLLAPSE -o pan pan.c 2>cc.log
      ./pan -m200000 >pan.log 2>&1
    else
      cc -O1 -DCOLLAPSE -o pan pan.c 2>cc.log
      ./pan -a -m200000 -N "${mode#ltl:}" >pan.log 2>&1
    fi
  ) || {
    {
      echo "FAIL $name: spin, cc or pan did not run:"
      cat "$dir"/*.log
    } >"$dir/result"
    touch "$dir/failed"
    return
  }
  t1=$(date +%s.%N)
  report="$dir/pan.log"
  errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' "$report" | head -1)
  states=$(sed -n 's/^ *\([0-9][0-9.e+]*\) states, stored.*/\1/p' "$report" | head -1)
  local trail=no
  if ls "$dir"/*.trail >/dev/null 2>&1; then trail=yes; fi
  if [ -z "$errors" ]; then
    verdict="FAIL (no 'errors:' line in pan's report)"
    touch "$dir/failed"
  elif [ "$expect" = pass ] && [ "$errors" = 0 ] && [ "$trail" = no ]; then
    verdict="proved"
  elif [ "$expect" = fail ] && [ "$errors" != 0 ] && [ "$trail" = yes ]; then
    verdict="counterexample found, as required: $(grep -m1 -o 'assertion violated.*\|acceptance cycle.*\|claim violated.*' "$report" || echo "error")"
  else
    verdict="FAIL (expected $expect, got errors: $errors, trail: $trail)"
    touch "$dir/failed"
  fi
  printf '%-34s %12s states %7.1f s  %s\n' "$name" "$states" "$(awk "BEGIN { print $t1 - $t0 }")" \
    "$verdict" >"$dir/result"
}

names=()
# run: as check, in the background, at most $lanes at once
run() {
  names+=("$2")
  while [ "$(jobs -rp | wc -l)" -ge "$lanes" ]; do wait -n || true; done
  check "$@" &
}

echo "== positive models (every property must hold), then negative models (each must produce a"
echo "   counterexample); $lanes at a time"
run pass mark-observers mark-protocol.pml safety -DOBSERVERS=3 -DREADERS=0 -DROUNDS=2 -DMAXT=3
run pass mark-lock-free-read mark-protocol.pml safety -DOBSERVERS=1 -DREADERS=1 -DROUNDS=1 -DMAXT=3
run pass mark-watched-read mark-protocol.pml safety -DWATCH -DOBSERVERS=1 -DREADERS=1 -DROUNDS=1 -DREADER_ROUNDS=2 -DMAXT=2
run pass mark-shared-watch-read mark-protocol.pml safety -DWATCH -DSHARED_WATCH -DOBSERVERS=1 -DREADERS=1 -DROUNDS=1 -DREADER_ROUNDS=2 -DMAXT=2
run pass mark-cached-writer mark-protocol.pml safety -DCACHED_WRITER -DOBSERVERS=1 -DREADERS=0 -DROUNDS=2 -DMAXT=3
run pass mark-group-commit mark-protocol.pml safety -DOBSERVERS=0 -DGROUPERS=2 -DREADERS=0 -DROUNDS=1 -DMAXT=3
run pass mark-ltl-reset-never-undone mark-protocol.pml ltl:reset_never_undone -DOBSERVERS=2 -DREADERS=0 -DMAXT=3
run pass sign-in-two-signins-reader sign-in-protocol.pml safety -DSIGNINS=2 -DREADERS=1
run pass sign-in-staging-replay sign-in-protocol.pml safety -DREPLAY -DNO_CRASH -DSIGNINS=2 -DREADERS=1
run pass sign-in-ltl-generations-grow sign-in-protocol.pml ltl:generations_only_grow -DSIGNINS=2 -DREADERS=0
run pass path-watch path-watch.pml safety -DDIRS=3 -DMOVES=3 -DREADS=3

run fail neg-observe-without-lock mark-protocol.pml safety -DNO_LOCK -DOBSERVERS=2 -DREADERS=0 -DMAXT=3
run fail neg-mark-before-items-staged sign-in-protocol.pml safety -DMARK_FIRST -DSIGNINS=2 -DREADERS=1
run fail neg-staging-replay-id-unchecked sign-in-protocol.pml safety -DREPLAY -DNO_CRASH -DNO_ID -DSIGNINS=2 -DREADERS=1
run fail neg-reader-clock-before-mark mark-protocol.pml safety -DCLOCK_BEFORE_MARK -DOBSERVERS=1 -DREADERS=1 -DMAXT=3
run fail neg-group-cover-without-lock mark-protocol.pml safety -DCOVER_UNLOCKED -DOBSERVERS=0 -DGROUPERS=2 -DREADERS=0 -DMAXT=3
run fail neg-group-cover-newest-unlocked mark-protocol.pml safety -DCOVER_NEWEST -DOBSERVERS=0 -DGROUPERS=2 -DREADERS=0 -DMAXT=3
run fail neg-watch-drained-after-read mark-protocol.pml safety -DWATCH -DDRAIN_AFTER_READ -DOBSERVERS=1 -DREADERS=1 -DROUNDS=1 -DREADER_ROUNDS=2 -DMAXT=2
run fail neg-shared-watch-tag-after-read mark-protocol.pml safety -DWATCH -DSHARED_WATCH -DTAG_AFTER_READ -DOBSERVERS=1 -DREADERS=1 -DROUNDS=1 -DREADER_ROUNDS=2 -DMAXT=2
run fail neg-writer-view-before-lock mark-protocol.pml safety -DCACHED_WRITER -DWRITER_VIEW_BEFORE_LOCK -DOBSERVERS=1 -DREADERS=0 -DROUNDS=2 -DMAXT=3
run fail neg-writer-copy-without-poll mark-protocol.pml safety -DCACHED_WRITER -DWRITER_NO_POLL -DOBSERVERS=1 -DREADERS=0 -DROUNDS=2 -DMAXT=3
run fail neg-path-checked-before-watch path-watch.pml safety -DCHECK_BEFORE_WATCH
run fail neg-path-watch-not-ended path-watch.pml safety -DNO_END
run fail neg-path-watch-ended-by-neighbours path-watch.pml safety -DNOISE_ENDS
run fail neg-lock-free-read-unvalidated mark-protocol.pml safety -DNO_VALIDATION -DOBSERVERS=1 -DREADERS=1 -DMAXT=3

wait
failures=0
for name in "${names[@]}"; do
  cat "$work/$name/result"
  if [ -e "$work/$name/failed" ]; then failures=$((failures + 1)); fi
done
finished=$(date +%s.%N)
printf 'model check: %.1f s in all (wall clock), %d failure(s); CPU time of this script and its runs:\n' \
  "$(awk "BEGIN { print $finished - $started }")" "$failures"
times
[ "$failures" = 0 ]
