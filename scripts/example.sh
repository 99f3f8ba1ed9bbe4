#!/usr/bin/env bash
# The first command of the README: installs what is missing, builds, and runs an example
# analysis (a pandas summary and a matplotlib chart) in a sandbox, recorded in the history.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
exec bin/pysandbox run --description "example analysis: pandas summary and a chart" examples/analysis.py
