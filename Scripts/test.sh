#!/usr/bin/env bash
# Runs every test: the README's test command.
#
# When libsecret is installed (`pkg-config --exists libsecret-1`), the package is built with the
# SecretService trait and the Secret Service tests run against a real gnome-keyring-daemon inside
# a private session bus with an unlocked keyring and a fresh HOME / XDG_RUNTIME_DIR
# (Scripts/with-secret-service.sh). Otherwise one line says they were skipped and why. Every
# other test runs exactly once either way.
#
# When the TPM Software Stack is installed (`pkg-config --exists tss2-esys`), the TPM trait is
# enabled too: the TPM clock, `--tpm` on the command line, and the tests against swtpm (each
# skipped, with the reason, when swtpm or tpm2-tools is missing).
#
# Each test run is bounded (OFFLINE_TTL_TEST_LIMIT seconds, default 2400 for the main run and
# 1200 for the Secret Service run; the main run took 1730 s on 2 cores at load 25-34, 166 s
# quiet): a run that outlives it is stopped, the tests that started and never finished are
# listed, and the script fails, so a hang names itself instead of stalling CI.
set -euo pipefail
cd "$(dirname "$0")/.."

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# bounded <name> <seconds> <command...>: runs one `swift test` command under a time limit
# (OFFLINE_TTL_TEST_LIMIT overrides it), its output copied to a log; on a timeout, lists the
# unfinished tests from that log and exits 1.
bounded() {
  local name=$1
  local limit=${OFFLINE_TTL_TEST_LIMIT:-$2}
  shift 2
  local status
  set +e
  timeout --kill-after=30 "$limit" "$@" 2>&1 | tee "$logs/$name.log"
  status=${PIPESTATUS[0]}
  set -e
  if [ "$status" = 124 ] || [ "$status" = 137 ]; then
    echo "error: $name did not finish within $limit s (OFFLINE_TTL_TEST_LIMIT); stopped."
    echo "Tests that started and never finished:"
    # Swift Testing prints `◇ Test <name> started.` and then passed/failed/skipped lines.
    grep -v ' Test case passing ' "$logs/$name.log" | sed -n 's/^.* Test \(.*\) started\.$/\1/p' \
      | sort -u >"$logs/started"
    sed -n 's/^.* Test \(.*\) \(passed\|failed\|skipped\|recorded\).*$/\1/p' "$logs/$name.log" \
      | sort -u >"$logs/ended"
    comm -23 "$logs/started" "$logs/ended" | sed 's/^/  /'
    exit 1
  fi
  return "$status"
}

traits=()
skip_reason=""
if ! command -v pkg-config >/dev/null || ! pkg-config --exists libsecret-1; then
  skip_reason="libsecret-1 not found by pkg-config (Debian: libsecret-1-dev)"
else
  traits=(--traits SecretService)
  for tool in gnome-keyring-daemon dbus-run-session dbus-send; do
    if ! command -v "$tool" >/dev/null; then
      skip_reason="$tool is not installed (Debian: gnome-keyring, dbus)"
      break
    fi
  done
fi

if command -v pkg-config >/dev/null && pkg-config --exists tss2-esys tss2-tctildr tss2-rc; then
  if [ ${#traits[@]} -eq 0 ]; then traits=(--traits TPM); else traits=(--traits SecretService,TPM); fi
else
  echo "TPM trait off: tss2-esys not found by pkg-config (Debian: libtss2-dev)"
fi

swift build --build-tests "${traits[@]}"
bounded tests 2400 swift test --skip-build "${traits[@]}" --skip SecretServiceTests
if [ -n "$skip_reason" ]; then
  echo "Secret Service tests skipped: $skip_reason"
else
  bounded secret-service-tests 1200 \
    Scripts/with-secret-service.sh swift test --skip-build "${traits[@]}" --filter SecretServiceTests
fi
