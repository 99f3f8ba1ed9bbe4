#!/usr/bin/env bash
# Builds the container backend's default image, pysandbox-python:<version>, without any registry
# (issue 17): a Debian bookworm minbase root made by debootstrap from Debian's own packages, with
# python3, numpy, pandas and matplotlib, imported into the engine that DOCKER_HOST names (Podman's
# service from scripts/podman-service.sh, or Docker). The runner is not in the image: the backend
# mounts it at run time, so any image with python3 works.
#
#   DOCKER_HOST=unix://… scripts/build-image.sh [IMAGE]
#
# The image carries the label dev.pysandbox.recipe, a hash of this script and its package list.
# When the engine already has IMAGE with that label, nothing is done; when the recipe changes, the
# image is rebuilt. The root's tarball is cached outside the checkout (PYSANDBOX_CACHE, default
# ~/.cache/pysandbox), so a second engine on one machine only imports it. Needs root (debootstrap)
# and the docker CLI as a client; scripts/setup.sh --containers installs debootstrap.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf '[build-image] %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

suite=bookworm
packages=(python3 python3-numpy python3-pandas python3-matplotlib)
# python3-fonttools (for matplotlib) depends on "python3-scipy | python3-munkres" and
# "python3-ufolib2 | python3-defcon"; scipy brings pythran, gcc and boost (1.2 GB instead of
# ~400 MB). debootstrap always takes the first alternative, so it makes only the base and apt,
# inside the root, installs the rest with these small alternatives marked first.
alternatives=(python3-munkres python3-defcon)
version=$(sed -n 's|^  <version>\(.*\)</version>|\1|p' pom.xml | head -n 1)
[[ -n $version ]] || die "no <version> in pom.xml"
image=${1:-pysandbox-python:$(printf '%s' "$version" | tr -c 'A-Za-z0-9_.-' '_')}
recipe=$( (cat "${BASH_SOURCE[0]}"; printf '%s\n' "$suite" "${packages[@]}" "${alternatives[@]}") | sha256sum | cut -c1-16)

[[ -n ${DOCKER_HOST:-} ]] || die "DOCKER_HOST is not set (eval \"\$(scripts/podman-service.sh start DIR)\")"
command -v docker >/dev/null || die "the docker CLI (a client) is needed to import the image"

have=$(docker image inspect --format '{{ index .Config.Labels "dev.pysandbox.recipe" }}' "$image" 2>/dev/null || true)
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
flock 9 # two builds on one machine: the second waits, then finds the tarball

if [[ ! -f $tarball ]]; then
  command -v debootstrap >/dev/null || die "debootstrap is not installed (scripts/setup.sh --containers installs it)"
  [[ $(id -u) -eq 0 ]] || die "debootstrap needs root"
  root=$(mktemp -d "$cache/images/rootfs.XXXXXX")
  trap 'rm -rf "$root" "$tarball.part"' EXIT
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
  trap - EXIT
  say "root built in $((SECONDS - started)) s: $tarball ($(du -h "$tarball" | cut -f1))"
fi

say "importing $image into $DOCKER_HOST"
previous=$(docker image inspect --format '{{ .Id }}' "$image" 2>/dev/null || true)
started=$SECONDS
docker import \
  --change "LABEL dev.pysandbox.recipe=$recipe" \
  --change "LABEL dev.pysandbox.packages=${packages[*]}" \
  --change "LABEL org.opencontainers.image.title=pysandbox-python" \
  --change "LABEL org.opencontainers.image.version=$version" \
  --change "ENV PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 MPLBACKEND=Agg" \
  --change 'CMD ["python3"]' \
  "$tarball" "$image" >/dev/null
have=$(docker image inspect --format '{{ index .Config.Labels "dev.pysandbox.recipe" }}' "$image" 2>/dev/null || true)
[[ $have == "$recipe" ]] || die "imported $image but the engine reports recipe '$have', not $recipe"
# The image it replaces would stay behind untagged; a container still using it keeps it.
if [[ -n $previous ]] && ! docker image inspect "$image" --format '{{ .Id }}' | grep -qx "$previous"; then
  docker image rm "$previous" >/dev/null 2>&1 || say "kept the previous image $previous (in use)"
fi
say "$image imported in $((SECONDS - started)) s (recipe $recipe)"
