#!/usr/bin/env bash
# The second command of the README: the same set-up, then every test (real bubblewrap, real
# Python, real SQLite, a real MCP client over stdio). CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
exec mvn -B verify "$@"
