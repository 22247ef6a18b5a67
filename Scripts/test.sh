#!/usr/bin/env bash
# Runs every test: the README's test command.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests
swift test --skip-build
