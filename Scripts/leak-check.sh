#!/usr/bin/env bash
# Leak check of the Secret Service backend: valgrind memcheck over every call of both stores
# (offline-ttl-secret-probe `exercise`, failures included) inside a private keyring session,
# with Scripts/valgrind-swift-glib.supp (one-time Swift runtime and GLib allocations only).
# Fails on any definite, indirect or unsuppressed possible leak, or any memory error.
#
#   Scripts/leak-check.sh [rounds]      (default 10; about 3 s per round under valgrind)
#   Scripts/leak-check.sh --conformance (LeakSanitizer over both shared conformance suites run
#                                        against the keyring: an address-sanitized build in
#                                        .build-asan, about 5 minutes on 2 cores)
#
# valgrind cannot run the Swift Testing binary itself (3.19 dies on libdispatch's signal
# thread), hence LeakSanitizer for the conformance run.
#
# Needs libsecret-1-dev, gnome-keyring, dbus and valgrind. Not run by Scripts/test.sh: see
# docs/secret-service.md for why and for the last result.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--conformance" ]; then
  swift build --build-tests --traits SecretService --sanitize=address --scratch-path .build-asan
  bundle=$(swift build --traits SecretService --sanitize=address --scratch-path .build-asan \
    --show-bin-path)/OfflineTTLPackageTests.xctest
  exec Scripts/with-secret-service.sh env ASAN_OPTIONS=detect_leaks=1 "$bundle" \
    --testing-library swift-testing \
    --filter "passesTheClockMarkStoreConformanceSuite|passesTheCacheItemStoreConformanceSuite"
fi
rounds=${1:-10}
command -v valgrind >/dev/null || { echo "leak-check: valgrind is not installed" >&2; exit 69; }
swift build --traits SecretService --product offline-ttl-secret-probe
probe=$(swift build --traits SecretService --show-bin-path)/offline-ttl-secret-probe
log=$(mktemp "${TMPDIR:-/tmp}/offline-ttl-leak.XXXXXX")
Scripts/with-secret-service.sh bash -c '
  locks=$(mktemp -d)
  valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect,possible \
    --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=99 \
    --suppressions=Scripts/valgrind-swift-glib.supp --num-callers=40 --log-file="$0" \
    "$1" org.offlinettl.leakcheck "$locks" exercise "$2"
' "$log" "$probe" "$rounds" && status=0 || status=$?
grep -E "definitely lost|indirectly lost|possibly lost|still reachable|suppressed:|ERROR SUMMARY" "$log" \
  | sed 's/^==[0-9]*== *//'
echo "leak-check: full log in $log"
exit "$status"
