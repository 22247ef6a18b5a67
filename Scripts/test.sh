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

if command -v pkg-config >/dev/null && pkg-config --exists tss2-esys tss2-tctildr tss2-rc; then
  if [ ${#traits[@]} -eq 0 ]; then traits=(--traits TPM); else traits=(--traits SecretService,TPM); fi
else
  echo "TPM trait off: tss2-esys not found by pkg-config (Debian: libtss2-dev)"
fi

swift build --build-tests "${traits[@]}"
swift test --skip-build "${traits[@]}" --skip SecretServiceTests
if [ -n "$skip_reason" ]; then
  echo "Secret Service tests skipped: $skip_reason"
else
  Scripts/with-secret-service.sh swift test --skip-build "${traits[@]}" --filter SecretServiceTests
fi
