#!/usr/bin/env bash
# Waits until the session bus's Secret Service (org.freedesktop.secrets) answers and its default
# collection is unlocked: after starting gnome-keyring-daemon, or restarting it with --replace
# --unlock, before anything uses the keyring. A fixed sleep is not enough on a loaded machine.
#   Scripts/wait-for-secret-service.sh [SECONDS]    (default 60)
# Exits 0 once ready; 1 with a message on standard error when SECONDS of real time passed first.
# Needs dbus-send (Debian: dbus).
set -uo pipefail
limit=${1:-60}
start=$SECONDS
while :; do
  # Asked of the name's current owner by its unique name: a call to org.freedesktop.secrets
  # itself would make the bus start (activate) another daemon while the name has no owner.
  owner=$(dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.GetNameOwner string:org.freedesktop.secrets 2>/dev/null |
    sed -n 's/^ *string "\(:[^"]*\)"$/\1/p')
  if [ -n "$owner" ] &&
    dbus-send --session --print-reply --reply-timeout=5000 --dest="$owner" \
      /org/freedesktop/secrets/aliases/default org.freedesktop.DBus.Properties.Get \
      string:org.freedesktop.Secret.Collection string:Locked 2>/dev/null |
    grep -q "boolean false"; then
    exit 0
  fi
  if ((SECONDS - start >= limit)); then
    echo "wait-for-secret-service.sh: the Secret Service's default collection was not unlocked" \
      "after ${limit} s" >&2
    exit 1
  fi
  sleep 0.1
done
