#!/usr/bin/env bash
# Fuzzes every decoder of outside bytes with libFuzzer and AddressSanitizer, a bounded time each.
#
#   Scripts/fuzz.sh [seconds per target, default 60] [target ...]
#
# Targets (entry points in Sources/OfflineTTL/Fuzzing/ and Sources/OfflineTTLCommandLine/Fuzzing/):
# mark-record, cache-index, item-header, sealed-item-header, batch-line, duration, rfc3339. One
# build of offline-ttl-fuzz (`-sanitize=fuzzer,address`, scratch path .build/fuzz) serves them all; the
# target is chosen by OFFLINE_TTL_FUZZ_TARGET. Seeds: Fuzz/Corpus/<target>/ (read only); what
# the fuzzer learns is kept in .build/fuzz/corpus/<target>/; a failing input is saved in
# .build/fuzz/artifacts/ with the command that replays it. Prints, per target, the executions
# and the corpus size, and exits 1 when any target found a crash or a broken promise.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
all=(mark-record cache-index item-header sealed-item-header batch-line duration rfc3339)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=("${all[@]}"); fi
case "$seconds" in '' | *[!0-9]*)
  echo "usage: Scripts/fuzz.sh [seconds per target] [target ...]" >&2
  exit 64
  ;;
esac

scratch=.build/fuzz
build_start=$(date +%s)
# ld.gold warns once per ASan assembly stub ("Cannot export local symbol"): harmless, filtered.
set +e
swift build --product offline-ttl-fuzz --scratch-path "$scratch" \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -DOFFLINE_TTL_LIBFUZZER 2>&1 |
  grep -v "Cannot export local symbol"
build_status=${PIPESTATUS[0]}
set -e
if [ "$build_status" -ne 0 ]; then
  echo "fuzz: the fuzz build failed" >&2
  exit 1
fi
binary="$scratch/debug/offline-ttl-fuzz"
echo "fuzz: build $(($(date +%s) - build_start)) s"

max_len() {
  case "$1" in
    mark-record) echo 8300 ;; # a whole 8 KiB record file and the mode byte
    duration | rfc3339) echo 128 ;;
    sealed-item-header) echo 128 ;; # mode byte, file size, the 56-byte header and a little more
    *) echo 4096 ;;
  esac
}

failed=()
mkdir -p "$scratch/artifacts" "$scratch/logs"
for target in "${targets[@]}"; do
  if [ ! -d "Fuzz/Corpus/$target" ]; then
    echo "fuzz: no such target '$target' (targets: ${all[*]})" >&2
    exit 64
  fi
  work="$scratch/corpus/$target"
  log="$scratch/logs/$target.log"
  mkdir -p "$work"
  status=0
  # The Swift runtime's backtracer would fight AddressSanitizer's report: off.
  SWIFT_BACKTRACE=enable=no OFFLINE_TTL_FUZZ_TARGET="$target" \
    timeout $((seconds + 120)) "$binary" -max_total_time="$seconds" -max_len="$(max_len "$target")" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$scratch/artifacts/$target-" "$work" "Fuzz/Corpus/$target" >"$log" 2>&1 ||
    status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  units=$(find "$work" -type f | wc -l)
  if [ "$status" -eq 0 ]; then
    echo "fuzz: $target: ${runs:-?} executions in ${seconds} s, no crash (corpus: $units learned inputs)"
  else
    failed+=("$target")
    echo "fuzz: $target: FAILED (exit $status) after ${runs:-?} executions; log: $log" >&2
    grep -E "^(==[0-9]+==ERROR|SUMMARY|$target:)|Fatal error|Test unit written" "$log" | head -20 >&2 || true
    echo "fuzz: replay: swift run offline-ttl-fuzz $target $scratch/artifacts/$target-*" >&2
  fi
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: failing targets: ${failed[*]}" >&2
  exit 1
fi
