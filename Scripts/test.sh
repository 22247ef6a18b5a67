#!/usr/bin/env bash
# Runs every test: the README's test command.
#
# When libsecret is installed (`pkg-config --exists libsecret-1`), the package is built with the
# SecretService trait and the Secret Service tests run against a real gnome-keyring-daemon inside
# a private session bus with an unlocked keyring and a fresh HOME / XDG_RUNTIME_DIR
# (Scripts/with-secret-service.sh). Otherwise one line says they were skipped and why. Every
# other test runs exactly once either way.
set -euo pipefail
cd "$(dirname "$0")/.."

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

swift build --build-tests "${traits[@]}"
swift test --skip-build "${traits[@]}" --skip SecretServiceTests
if [ -n "$skip_reason" ]; then
  echo "Secret Service tests skipped: $skip_reason"
else
  Scripts/with-secret-service.sh swift test --skip-build "${traits[@]}" --filter SecretServiceTests
fi
