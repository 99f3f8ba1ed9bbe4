#!/usr/bin/env bash
# Builds the container backend's default image, pysandbox-python:<version>, without any registry
# (issue 17): a Debian bookworm minbase root made by debootstrap from Debian's own packages, with
# python3 and the data-science stack (numpy, pandas, matplotlib, seaborn, scikit-learn, statsmodels,
# openpyxl, plotly, reportlab), imported into the engine that DOCKER_HOST names (Podman's
# service from scripts/podman-service.sh, or Docker). The runner is not in the image: the backend
# mounts it at run time, so any image with python3 works.
#
#   DOCKER_HOST=unix://… scripts/build-image.sh [IMAGE]
#
# The image carries the label dev.pysandbox.recipe, a hash of this script and its package list.
# When the engine already has IMAGE with that label, nothing is done; when the recipe changes, the
# image is rebuilt. The root's tarball is cached outside the checkout (PYSANDBOX_CACHE, default
# ~/.cache/pysandbox), so a second engine on one machine only imports it. Needs root (debootstrap),
# curl and python3; scripts/setup.sh --containers installs them. No docker CLI: the script talks to
# the Engine API itself (curl --unix-socket), so DOCKER_HOST must be a unix:// socket.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf '[build-image] %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

suite=bookworm
# venv and pip: package environments are built in the container with them (issue 16). The rest of
# the data-science stack as scripts/setup.sh installs it for bwrap (issue 23): seaborn,
# scikit-learn, statsmodels, openpyxl, plotly, reportlab.
packages=(python3 python3-numpy python3-pandas python3-matplotlib python3-venv python3-pip
  python3-seaborn python3-sklearn python3-statsmodels python3-openpyxl python3-plotly
  python3-reportlab)
# python3-fonttools (for matplotlib) depends on "python3-scipy | python3-munkres" and
# "python3-ufolib2 | python3-defcon". scikit-learn, statsmodels and seaborn need scipy itself
# (which brings pythran, gcc and boost: the image is over 1 GB since issue 23), but debootstrap
# always takes the first alternative, so it makes only the base and apt, inside the root, installs
# the rest with these small alternatives marked first.
alternatives=(python3-munkres python3-defcon)
# The version the server names its default image after (docker_image), not the pom's.
version=$(sed -n 's|.*String VALUE = "\(.*\)";.*|\1|p' api/src/main/java/dev/pysandbox/api/Version.java | head -n 1)
[[ -n $version ]] || die "no VALUE in api/src/main/java/dev/pysandbox/api/Version.java"
image=${1:-pysandbox-python:$(printf '%s' "$version" | tr -c 'A-Za-z0-9_.-' '_')}
recipe=$( (cat "${BASH_SOURCE[0]}"; printf '%s\n' "$suite" "${packages[@]}" "${alternatives[@]}") | sha256sum | cut -c1-16)

[[ -n ${DOCKER_HOST:-} ]] || die "DOCKER_HOST is not set (eval \"\$(scripts/podman-service.sh start DIR)\")"
case $DOCKER_HOST in
  unix://?*) sock=${DOCKER_HOST#unix://} ;;
  *) die "DOCKER_HOST=$DOCKER_HOST is not supported: this script talks to the engine over a Unix socket only (DOCKER_HOST=unix:///path/to/docker.sock); for a tcp:// or ssh:// engine, import the root's tarball with that engine's own client" ;;
esac
command -v curl >/dev/null || die "curl is not installed (scripts/setup.sh --containers installs it)"
command -v python3 >/dev/null || die "python3 is not installed (scripts/setup.sh installs it)"
[[ -S $sock ]] || die "no engine socket at $sock (DOCKER_HOST=$DOCKER_HOST): start one with scripts/podman-service.sh start DIR"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/build-image.XXXXXX")
cleanup=("$scratch")
# remove PATH...: a root that debootstrap left with /proc or /sys mounted (killed part-way) is
# unmounted first, and --one-file-system never goes into a mount that stayed.
remove() {
  local path mnt
  for path in "$@"; do
    while read -r _ mnt _; do
      if [[ $mnt == "$path"/* ]]; then umount -l "$mnt" 2>/dev/null || true; fi
    done </proc/self/mounts
    rm -rf --one-file-system "$path" 2>/dev/null || true
  done
}
trap 'remove "${cleanup[@]}"' EXIT
trap 'exit 143' TERM # so that a stopped build (scripts/test.sh) cleans up too
trap 'exit 130' INT

# engine METHOD PATH [curl options]: the Engine API (v1.41, which Docker and Podman 4 both serve)
# on DOCKER_HOST's socket. The body goes to $scratch/body; prints the HTTP status (000: no answer).
engine() {
  local method=$1 path=$2
  shift 2
  curl -sS --unix-socket "$sock" --connect-timeout 10 --max-time "${max_time:-60}" -X "$method" \
    -o "$scratch/body" -w '%{http_code}' "$@" "http://engine/v1.41$path" 2>"$scratch/curl.err" \
    || cat "$scratch/curl.err" >&2
}
# json EXPRESSION: evaluates a Python expression over the last body (as d).
json() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]) or "")' "$scratch/body" "$1"; }
urlencode() {
  local LC_ALL=C s=$1 out= c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    case $c in [A-Za-z0-9._~-]) out+=$c ;; *) printf -v c '%%%02X' "'$c"; out+=$c ;; esac
  done
  printf '%s' "$out"
}
# image_field EXPRESSION: that field of IMAGE as the engine has it, empty when it has no IMAGE.
image_field() {
  local status
  status=$(engine GET "/images/$image/json")
  case $status in
    200) json "$1" ;;
    404) ;;
    *) die "GET /images/$image/json on $DOCKER_HOST answered $status: $(head -c 500 "$scratch/body" 2>/dev/null)" ;;
  esac
}
recipe_of_image() { image_field '((d.get("Config") or {}).get("Labels") or {}).get("dev.pysandbox.recipe")'; }

have=$(recipe_of_image)
if [[ $have == "$recipe" ]]; then
  say "$image is up to date (recipe $recipe)"
  exit 0
fi

# The mirror apt on this machine uses (deb822 sources or sources.list), else Debian's own.
mirror=${PYSANDBOX_DEBIAN_MIRROR:-}
if [[ -z $mirror ]]; then
  mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | sed -n 's|^URIs:[[:space:]]*\(\S*/debian\)/\?[[:space:]]*$|\1|p' | head -n 1)
fi
if [[ -z $mirror ]]; then
  mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
    | sed -n 's|^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\(\S*/debian\)/\?[[:space:]]\+'"$suite"'[[:space:]].*|\2|p' | head -n 1)
fi
mirror=${mirror:-http://deb.debian.org/debian}

cache=${PYSANDBOX_CACHE:-${HOME:-/root}/.cache/pysandbox}
tarball=$cache/images/rootfs-$suite-$recipe.tar
mkdir -p "$cache/images" "$cache/debootstrap-debs"
exec 9>"$cache/images/.lock"
flock 9 # two builds on one machine: the second waits, then finds the tarball or the image
have=$(recipe_of_image)
if [[ $have == "$recipe" ]]; then
  say "$image is up to date (recipe $recipe, imported while this build waited)"
  exit 0
fi

# Roots of builds that were killed, and logs of failed ones: the lock is free only when no build
# runs on this cache.
for stale in "$cache"/images/rootfs.*; do
  if [[ -d $stale ]]; then say "removing $stale (a build that did not finish)"; fi
  if [[ -e $stale ]]; then remove "$stale"; fi
done

if [[ ! -f $tarball ]]; then
  command -v debootstrap >/dev/null || die "debootstrap is not installed (scripts/setup.sh --containers installs it)"
  [[ $(id -u) -eq 0 ]] || die "debootstrap needs root"
  root=$(mktemp -d "$cache/images/rootfs.XXXXXX")
  cleanup+=("$root" "$tarball.part")
  say "debootstrap $suite (minbase + ${packages[*]}) from $mirror"
  started=$SECONDS
  if ! debootstrap --variant=minbase --include=python3 --cache-dir="$cache/debootstrap-debs" \
    "$suite" "$root" "$mirror" >"$root.log" 2>&1; then
    tail -n 20 "$root.log" >&2
    die "debootstrap failed (log: $root.log)"
  fi
  # apt in the root, with the .debs it fetches kept beside debootstrap's for the next build.
  cp -n "$cache"/debootstrap-debs/*.deb "$root"/var/cache/apt/archives/ 2>/dev/null || true
  if ! chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
    sh -c 'apt-get update -q && apt-get install -y -q --no-install-recommends "$@"' sh \
    "${alternatives[@]}" "${packages[@]}" >>"$root.log" 2>&1; then
    tail -n 20 "$root.log" >&2
    die "apt-get install in the root failed (log: $root.log)"
  fi
  rm -f "$root.log"
  cp -n "$root"/var/cache/apt/archives/*.deb "$cache/debootstrap-debs/" 2>/dev/null || true
  # What only apt needs; the image never runs apt.
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/var/log/* \
    "$root"/usr/share/doc "$root"/usr/share/man "$root"/usr/share/info
  tar --numeric-owner -C "$root" -cf "$tarball.part" .
  mv "$tarball.part" "$tarball"
  find "$cache/images" -maxdepth 1 -name "rootfs-$suite-*.tar" ! -name "${tarball##*/}" -delete # older recipes
  rm -rf "$root"
  say "root built in $((SECONDS - started)) s: $tarball ($(du -h "$tarball" | cut -f1))"
fi

say "importing $image into $DOCKER_HOST"
previous=$(image_field 'd.get("Id")')
started=$SECONDS
# repo is the whole reference, tag included, as the docker CLI sends it: Podman 4.3 ignores tag=.
query="fromSrc=-&repo=$(urlencode "$image")"
# One variable per ENV: Podman 4.3 reads "ENV A=1 B=2" as A="1 B=2".
for change in \
  "LABEL dev.pysandbox.recipe=$recipe" \
  "LABEL dev.pysandbox.packages=${packages[*]}" \
  "LABEL org.opencontainers.image.title=pysandbox-python" \
  "LABEL org.opencontainers.image.version=$version" \
  "ENV PATH=/usr/local/bin:/usr/bin:/bin" "ENV LANG=C.UTF-8" "ENV MPLBACKEND=Agg" \
  'CMD ["python3"]'; do
  query+="&changes=$(urlencode "$change")"
done
# The tarball is the request's body, streamed (-T), not read into memory. The answer is a stream
# of JSON messages, and an engine that fails part-way still answers 200 with an "error" message.
status=$(max_time=900 engine POST "/images/create?$query" -T "$tarball" \
  -H 'Content-Type: application/x-tar' -H 'Expect:')
if [[ $status != 200 ]] || grep -q '"error"' "$scratch/body"; then
  die "POST /images/create on $DOCKER_HOST answered $status: $(head -c 1000 "$scratch/body" 2>/dev/null)"
fi
have=$(recipe_of_image)
[[ $have == "$recipe" ]] || die "imported $image but the engine reports recipe '$have', not $recipe"
# The image it replaces would stay behind untagged; a container still using it keeps it.
now=$(image_field 'd.get("Id")')
if [[ -n $previous && $now != "$previous" ]]; then
  status=$(engine DELETE "/images/$previous")
  [[ $status == 200 ]] || say "kept the previous image $previous (DELETE answered $status: in use?)"
fi
say "$image imported in $((SECONDS - started)) s (recipe $recipe)"
