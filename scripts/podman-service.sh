#!/usr/bin/env bash
# Runs Podman's Docker-compatible API on a socket the caller owns, for the container backend's
# tests (issue 17) and for trying it by hand. Usage:
#   scripts/podman-service.sh start DIR   # prints: export DOCKER_HOST=unix://DIR/podman.sock
#   scripts/podman-service.sh env DIR     # prints the same line (and the podman CLI's variables)
#   scripts/podman-service.sh stop DIR    # stops the service started in DIR; nothing is left running
#
# What this machine kind needs (../shared/notes/sandbox-findings.md, section 4): runc, not crun
# (crun refuses cgroup v1/v2 hybrid hosts); ulimits at or below the hard limits, because the
# sandbox has no CAP_SYS_RESOURCE to raise them; cgroupfs and file events (no systemd, no
# journald). Everything is in DIR/containers.conf, given to the service with CONTAINERS_CONF.
#
# Storage: the service does not use the machine's Podman state (/var/lib/containers). Its images
# and containers live in a store of pysandbox's own, PYSANDBOX_PODMAN_STORE (default
# ~/.cache/pysandbox/podman), so an image imported by scripts/build-image.sh is still there on the
# next run and `podman images` on the machine never shows it. Two runs on one host share that
# store (Podman locks it) but not DIR: each has its own socket, config, log and pid file, and
# tests tell their containers apart by label (dev.pysandbox.instance).
set -euo pipefail

die() { printf '[podman-service] %s\n' "$*" >&2; exit 1; }
cmd=${1:-}; dir=${2:-}
[[ -n $cmd && -n $dir ]] || die "usage: $0 start|stop|env DIR"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
sock=$dir/podman.sock
pidfile=$dir/podman.pid
store=${PYSANDBOX_PODMAN_STORE:-${HOME:-/root}/.cache/pysandbox/podman}
# Podman's run-time state (locks, exit files) sits beside the store's key, on /run when root:
# the store's database records these paths, so every service on one store must use the same ones.
if [[ $(id -u) -eq 0 ]]; then run_base=/run/pysandbox-podman; else run_base=${XDG_RUNTIME_DIR:-/tmp}/pysandbox-podman-$(id -u); fi
run_dir=$run_base/$(printf '%s' "$store" | sha256sum | cut -c1-12)

print_env() {
  printf 'export DOCKER_HOST=unix://%s\n' "$sock"
  # For the podman CLI on the same store (debugging): CONTAINERS_CONF=… CONTAINERS_STORAGE_CONF=… podman ps
  printf '# podman CLI: export CONTAINERS_CONF=%s/containers.conf CONTAINERS_STORAGE_CONF=%s/storage.conf\n' "$dir" "$dir"
}

# gVisor, when Debian's runsc package is installed: an [engine.runtimes] entry "runsc" naming
# DIR/runsc, a wrapper that gives runsc its flags (containers.conf has no per-runtime flags):
#   --platform=ptrace  the KVM platform hangs here (/dev/kvm exists, no nested virtualisation)
#   --network=none     else no container starts, even with network none (podman.log: "setting up
#                      network: creating interfaces from net namespace ...: cannot run with
#                      network enabled in root network namespace"); loopback only, as runc's
#   --host-uds=open    lets a process connect to a Unix socket bind-mounted from the host (the
#                      worker hub); without it connect() fails with EPERM
# PYSANDBOX_RUNSC_FLAGS replaces them (add --oci-seccomp to apply the containers' seccomp profile
# inside gVisor: runsc 20221219 then answers every refused call with EPERM, clone3 included,
# and the C library can no longer start threads). Podman's Docker API ignores HostConfig.Runtime
# (the container runs on the default runtime), so a service for gVisor is started with
# PYSANDBOX_PODMAN_RUNTIME=runsc, which makes runsc the default of that service.
runsc_runtime() {
  local runsc=${PYSANDBOX_RUNSC:-/usr/bin/runsc}
  [[ -x $runsc ]] || return 0
  local flags=${PYSANDBOX_RUNSC_FLAGS:---platform=ptrace --network=none --host-uds=open}
  printf '#!/bin/sh\nexec %s %s "$@"\n' "$runsc" "$flags" >"$dir/runsc"
  chmod 755 "$dir/runsc"
  printf '\n[engine.runtimes]\nrunsc = ["%s"]\n' "$dir/runsc"
}

answers() { curl -fsS --max-time 2 --unix-socket "$sock" http://d/_ping >/dev/null 2>&1; }

running_pid() {
  [[ -f $pidfile ]] || return 1
  local pid; pid=$(cat "$pidfile")
  kill -0 "$pid" 2>/dev/null && [[ $(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null) == *"$sock"* ]] || return 1
  printf '%s' "$pid"
}

start() {
  command -v podman >/dev/null || die "podman is not installed (scripts/setup.sh --containers installs it)"
  command -v runc >/dev/null || die "runc is not installed (scripts/setup.sh --containers installs it)"
  if running_pid >/dev/null && answers; then print_env; return; fi
  mkdir -p "$store" "$run_dir"
  local nofile nproc
  nofile=$(ulimit -Hn); nproc=$(ulimit -Hu)
  [[ $nofile == unlimited || $nofile -gt 1048576 ]] && nofile=1048576
  [[ $nproc == unlimited || $nproc -gt 1048576 ]] && nproc=1048576
  # At most 4096 and never above the hard limits; a container's own --ulimit or pids limit goes
  # lower. Soft equal to hard: Podman 4.3 reads default_ulimits "soft:hard" as hard:soft (seen
  # in inspect: Soft 20000, Hard 4096 from "nofile=4096:20000"), and runc then fails with EINVAL.
  nofile=$((nofile < 4096 ? nofile : 4096)); nproc=$((nproc < 4096 ? nproc : 4096))
  cat >"$dir/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
log_driver = "k8s-file"

[engine]
runtime = "${PYSANDBOX_PODMAN_RUNTIME:-runc}"
cgroup_manager = "cgroupfs"
events_logger = "file"
tmp_dir = "$run_dir/libpod"
# An exec's conmon otherwise waits 300 s for the API to collect its exit code.
exit_command_delay = 10
EOF
  runsc_runtime >>"$dir/containers.conf"
  cat >"$dir/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$store/storage"
runroot = "$run_dir/storage"
EOF
  rm -f "$sock"
  # setsid: its own process group, so stop can end the service and whatever it forked. In DIR:
  # a container's conmon inherits the working directory and writes an "oom" file there when the
  # container is OOM-killed. Conmons also inherit CONTAINERS_CONF, by which stop finds them.
  (cd "$dir" && CONTAINERS_CONF=$dir/containers.conf CONTAINERS_STORAGE_CONF=$dir/storage.conf \
    exec setsid podman system service --time=0 "unix://$sock" >"$dir/podman.log" 2>&1 </dev/null) &
  echo $! >"$pidfile"
  for _ in $(seq 1 100); do
    if answers; then print_env; return; fi
    kill -0 "$(cat "$pidfile")" 2>/dev/null || { tail -n 20 "$dir/podman.log" >&2; die "podman system service exited (log: $dir/podman.log)"; }
    sleep 0.1
  done
  tail -n 20 "$dir/podman.log" >&2
  stop
  die "no answer on $sock after 10 s (log: $dir/podman.log)"
}

stop() {
  local pid
  if pid=$(running_pid); then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile" "$sock"
  # Conmons outlive the service: an exec's for exit_command_delay (10 s), a container's while it
  # runs. With the service gone nobody collects their exit codes, so end them now: the
  # container's processes first (KILL), then conmon (TERM). Tests remove their containers before
  # this; what a killed test left is in the store as a dead container, removed by its label.
  local left=() p c
  for p in $(pgrep -x conmon || true); do
    { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qxF "CONTAINERS_CONF=$dir/containers.conf" && left+=("$p")
  done
  for p in "${left[@]}"; do
    for c in $(pgrep -P "$p" || true); do kill -KILL "$c" 2>/dev/null || true; done
    kill -TERM "$p" 2>/dev/null || true
  done
  for p in "${left[@]}"; do
    for _ in $(seq 1 30); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  done
}

case $cmd in
  start) start ;;
  stop) stop ;;
  env) print_env ;;
  *) die "usage: $0 start|stop|env DIR" ;;
esac
