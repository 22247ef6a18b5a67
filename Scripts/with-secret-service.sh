#!/usr/bin/env bash
# Runs a command inside a private D-Bus session bus with a fresh, unlocked gnome-keyring
# (Secret Service) and a fresh HOME / XDG_RUNTIME_DIR for the daemon, then tears both down:
#   Scripts/with-secret-service.sh swift test --skip-build --filter SecretServiceTests
# The command sees OFFLINE_TTL_SECRET_SERVICE_READY=1, DBUS_SESSION_BUS_ADDRESS, the fresh
# XDG_RUNTIME_DIR (the default lock directory lives there) and a TMPDIR removed afterwards. Needs dbus-run-session and
# gnome-keyring-daemon (Debian: dbus, gnome-keyring).
set -euo pipefail
for tool in dbus-run-session gnome-keyring-daemon dbus-send; do
  command -v "$tool" >/dev/null || { echo "with-secret-service.sh: $tool is not installed" >&2; exit 69; }
done
scratch=$(mktemp -d "${TMPDIR:-/tmp}/offline-ttl-keyring.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -m 0700 "$scratch/home" "$scratch/run" "$scratch/tmp"
export OFFLINE_TTL_KEYRING_HOME="$scratch/home"
export XDG_RUNTIME_DIR="$scratch/run"
# Temporary files of the command (the tests' scratch directories) go away with the session.
export TMPDIR="$scratch/tmp"
# Waits until the keyring answers, unlocked (also for tests that restart the daemon).
export OFFLINE_TTL_WAIT_FOR_SECRET_SERVICE
OFFLINE_TTL_WAIT_FOR_SECRET_SERVICE="$(cd "$(dirname "$0")" && pwd)/wait-for-secret-service.sh"
# dbus-daemon warns "Failed to set fd limit" when not allowed to raise it: harmless, filtered.
dbus-run-session -- bash -c '
  set -euo pipefail
  printf offline-ttl-test | HOME="$OFFLINE_TTL_KEYRING_HOME" \
    gnome-keyring-daemon --unlock --components=secrets >/dev/null
  # Bounded (60 s, not 100 tries: seconds on a loaded machine); never runs the command against
  # a keyring that is not up and unlocked.
  "$OFFLINE_TTL_WAIT_FOR_SECRET_SERVICE" 60
  export OFFLINE_TTL_SECRET_SERVICE_READY=1
  "$@"
' with-secret-service "$@" 2> >(grep -v "Failed to set fd limit" >&2)
