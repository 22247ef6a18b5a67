#!/usr/bin/env bash
# Installs offline-ttl into a temporary prefix (Scripts/install.sh) and checks what a user gets:
# the installed binary's --version matches the top entry of CHANGELOG.md, `man -l` renders the
# page without warnings and with a section for every subcommand, and the bash completion loads
# (`complete -p offline-ttl`) after sourcing (the zsh one is syntax-checked when zsh exists).
#
#   Scripts/check-install.sh [--binary <path>]   (passed on to Scripts/install.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=$(mktemp -d "${TMPDIR:-/tmp}/offline-ttl-install.XXXXXX")
trap 'rm -rf "$prefix"' EXIT
Scripts/install.sh --prefix "$prefix" "$@"
tool="$prefix/bin/offline-ttl"

expected=$(sed -n 's/^## \[\([0-9][0-9.]*\)\].*/\1/p' CHANGELOG.md | head -n 1)
actual=$("$tool" --version)
if [ "$actual" != "offline-ttl $expected" ]; then
  echo "error: installed --version says '$actual', CHANGELOG.md's top entry is $expected" >&2
  exit 1
fi
echo "version: $actual"

page="$prefix/share/man/man1/offline-ttl.1"
warnings=$(MANWIDTH=100 man --warnings -l "$page" 2>&1 >/dev/null || true)
if [ -n "$warnings" ]; then
  echo "error: man -l reports warnings for $page:" >&2
  echo "$warnings" >&2
  exit 1
fi
rendered=$(MANWIDTH=100 MAN_KEEP_FORMATTING=0 man -P cat -l "$page" | col -b)
subcommands=$("$tool" --help | sed -n '/^SUBCOMMANDS:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
[ -n "$subcommands" ] || { echo "error: no subcommands in --help" >&2; exit 1; }
for name in $subcommands; do
  if ! grep -q "^   $name\$" <<<"$rendered"; then
    echo "error: the rendered manual page has no section for '$name'" >&2
    exit 1
  fi
done
for section in "EXIT STATUS" EXAMPLES; do
  grep -q "^$section" <<<"$rendered" || { echo "error: no $section in the page" >&2; exit 1; }
done
echo "man -l: $(wc -l <<<"$rendered") lines, a section for each of:" $subcommands

bash --norc --noprofile -c \
  "source '$prefix/share/bash-completion/completions/offline-ttl' && complete -p offline-ttl"
if command -v zsh >/dev/null; then
  zsh -n "$prefix/share/zsh/site-functions/_offline-ttl"
  echo "zsh completion: syntax ok"
else
  echo "zsh completion: not checked (zsh is not installed)"
fi
