#!/usr/bin/env bash
# Installs what pysandbox needs (Debian/Ubuntu packages, the sandbox user) and builds it.
# Idempotent: what is already there is left alone.
# Usage: scripts/setup.sh [--bench] [--containers] [--no-build]
#   --bench       also installs what the benchmark compares against (hyperfine, Jupyter).
#   --containers  also installs what the container backend's tests need: Podman (its Docker API,
#                 scripts/podman-service.sh) with runc, and debootstrap and curl
#                 (scripts/build-image.sh, which needs no docker CLI). scripts/test.sh uses it.
#   --no-build    installs only: no jar, no class-data archive. scripts/test.sh passes it, as its
#                 `mvn verify` builds both (package phase, before the integration tests), and a
#                 build here as well shaded and recorded everything twice (about 25 s of 2 cores).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf '[setup] %s\n' "$*" >&2; }

packages=(bubblewrap python3 python3-numpy python3-pandas python3-matplotlib python3-seccomp)
# The rest of the data-science stack users expect in the sandbox (check_setup reports each one;
# backend/InterpreterProbe.java lists them): plots, models, statistics, Excel, HTML charts, PDFs.
packages+=(python3-seaborn python3-sklearn python3-statsmodels python3-openpyxl python3-plotly
  python3-reportlab)
# A file system per workspace when the server runs as root: mkfs.ext4 and debugfs make the
# template image (e2fsprogs); the tests mount images of their own (mount, util-linux).
packages+=(e2fsprogs mount util-linux)
command -v java >/dev/null 2>&1 || packages+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || packages+=(maven)
# gcc and the C library's headers build the server's small JNI library (core/src/main/c).
packages+=(gcc libc6-dev)
# nbformat validates the notebooks pysandbox writes (tests) and lets a person open them in Jupyter.
packages+=(python3-nbformat)
# The run-diff tests check pysandbox's unified diffs against GNU diff and patch.
packages+=(diffutils patch)
# Package environments: python3 -m venv and pip build them (in a sandbox, through the egress proxy).
packages+=(python3-venv python3-pip ca-certificates)
# Node runs the real-client tests with the MCP TypeScript SDK (app/src/test/node).
command -v node >/dev/null 2>&1 || packages+=(nodejs npm)
build=yes
for arg in "$@"; do
  case $arg in
    --no-build) build=no ;;
    --bench) packages+=(hyperfine python3-ipykernel python3-jupyter-client) ;;
    # runc, not crun: crun refuses this kind of host's cgroup v1/v2 hybrid. uidmap (newuidmap)
    # is a dependency Podman needs for user namespaces. Not slirp4netns or fuse-overlayfs: the
    # service runs as root with --network none and the kernel's overlay (rootless would need them).
    # curl is the scripts' client for the Engine API (no docker CLI needed); procps has the pgrep
    # by which podman-service.sh stop finds the service's conmons. runsc is gVisor
    # (docker_runtime=runsc; podman-service.sh registers it, ptrace platform).
    --containers) packages+=(podman runc uidmap debootstrap curl procps runsc) ;;
    *) say "unknown option: $arg"; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

sudo=()
if [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi

if ((${#missing[@]})); then
  say "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; then
    say "apt-get install failed; refreshing the package lists and trying again"
    "${sudo[@]}" apt-get update >/dev/null
    "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

# When the server runs as root, sandboxes run as this unprivileged user.
if [[ $(id -u) -eq 0 ]] && ! getent passwd pysandbox >/dev/null; then
  say "creating the unprivileged sandbox user 'pysandbox'"
  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin pysandbox
fi

# Loop devices back the workspace images; without them the disk quota is only measured.
if [[ $(id -u) -eq 0 && ! -e /dev/loop-control ]]; then
  modprobe loop 2>/dev/null || say "no loop devices (modprobe loop failed): workspaces will be plain directories"
fi

jar=app/target/pysandbox.jar
newest_source=$(find pom.xml ./*/pom.xml ./*/src/main -type f -newer "$jar" 2>/dev/null | head -n 1 || true)
if [[ $build == yes && ( ! -f "$jar" || -n "$newest_source" ) ]]; then
  say "building $jar"
  mvn -B -q -DskipTests -Dspotless.check.skip=true package
fi

# The build records a class-data archive of the jar (scripts/record-cds-archive.sh, run by
# `mvn package`) that makes every start faster; record it here if it is missing or stale.
if [[ $build == yes && ( ! -f app/target/pysandbox.jsa || ! app/target/pysandbox.jsa -nt "$jar" ) ]]; then
  say "recording a class-data archive for faster start-up"
  scripts/record-cds-archive.sh
fi
# The MCP TypeScript SDK, exactly as the lock file pins it, for the client tests and the load
# figure. npm writes node_modules/.package-lock.json last, so a missing or older one means an
# install that never finished or a lock file that changed since.
node_dir=app/src/test/node
if [[ ! -f $node_dir/node_modules/.package-lock.json \
  || $node_dir/node_modules/.package-lock.json -ot $node_dir/package-lock.json ]]; then
  say "installing the MCP TypeScript SDK and markdownlint-cli2 (npm ci in $node_dir)"
  if ! (cd "$node_dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null); then
    rm -rf "$node_dir/node_modules"
    say "npm ci in $node_dir failed (is the npm registry reachable?)"
    exit 1
  fi
fi
if [[ $build == yes ]]; then
  say "ready: $(bin/pysandbox --version), node $(node --version)"
else
  say "ready (no build asked for): node $(node --version)"
fi
