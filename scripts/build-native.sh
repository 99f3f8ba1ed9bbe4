#!/usr/bin/env bash
# Builds pysandbox's JNI library (core/src/main/c/pysandbox_fs.c: openat with O_NONBLOCK, fstat,
# getdents64 … for reading workspaces by descriptor) into the classes directory, so that the jar
# carries it: core/target/classes/dev/pysandbox/core/native/linux-ARCH/libpysandboxfs.so.
# Run by the build in process-classes, after javac has written the JNI header
# (core/target/native/include). Needs gcc and a JDK's include/ directory (scripts/setup.sh installs gcc).
# Usage: scripts/build-native.sh JAVA_HOME OS_ARCH
set -euo pipefail
cd "$(dirname "$(realpath "${BASH_SOURCE[0]}")")/.."

java_home=${1:?usage: build-native.sh JAVA_HOME OS_ARCH}
arch=${2:?usage: build-native.sh JAVA_HOME OS_ARCH}
say() { printf '[native] %s\n' "$*" >&2; }

src=core/src/main/c/pysandbox_fs.c
header=core/target/native/include/dev_pysandbox_core_files_NativeFs.h
out=core/target/classes/dev/pysandbox/core/native/linux-$arch/libpysandboxfs.so

if ! command -v gcc >/dev/null 2>&1; then
  say "gcc is missing: it builds pysandbox's native file library (Debian: apt-get install gcc;"
  say "scripts/setup.sh installs it)"
  exit 1
fi
if [[ ! -f $java_home/include/jni.h ]]; then
  say "no JNI headers in $java_home/include: build with a JDK (openjdk-17-jdk-headless), not a JRE"
  exit 1
fi
if [[ ! -f $header ]]; then
  say "no $header: javac writes it (-h core/target/native/include); run the compile phase first"
  exit 1
fi
# javac writes the header again on every compile: rebuild only when an input's content changed.
stamp_file=core/target/native/inputs.sha256
stamp=$(cat "$src" "$header" "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1)
if [[ -f $out && -f $stamp_file && $(cat "$stamp_file") == "$stamp" ]]; then
  exit 0
fi
mkdir -p "$(dirname "$out")"
gcc -std=gnu11 -O2 -fPIC -shared -Wall -Wextra -Werror -fstack-protector-strong \
  -D_FORTIFY_SOURCE=2 -Wl,-z,relro,-z,now,-z,noexecstack \
  -I"$java_home/include" -I"$java_home/include/linux" -Icore/target/native/include \
  "$src" -o "$out.tmp"
mv -f "$out.tmp" "$out"
echo "$stamp" >"$stamp_file"
say "built $out"
