#!/usr/bin/env bash
# Builds the C library of the Rust host (host/capi) for this machine's Go platform and
# lays out what the Go module links by default, so the module folder alone builds:
#
#   build/include/render_store.h                      the header (host/capi/include)
#   build/<goos>-<goarch>[-musl]/librender_store_capi.a  the static library
#
# Options (or the environment variables beside them):
#   --musl                  RENDER_STORE_MUSL=1  a musl library (build/linux-<arch>-musl,
#                           the muslc build tag): needs the Rust target
#                           <arch>-unknown-linux-musl and musl-gcc (Debian's musl-tools)
#   --backends "s3 gcs"     RENDER_STORE_BACKENDS  the cloud backends built in (default
#                           "s3 gcs azure"; "" for file:// and mem:// alone)
#   --profile dev           RENDER_STORE_PROFILE   cargo's profile (default dist: LTO, one
#                           codegen unit; dev builds in a fraction of the time, for CI's
#                           layout checks, and is ten times larger; for this machine's
#                           own target it is the workspace's target/debug build)
#   --no-precompiled        compile the component at a process's first call instead
#                           (saves compiling cranelift for build.rs; with --profile dev
#                           and the default backends, the library `cargo build -p
#                           render-store-capi` alone makes, in target/debug)
#
# The library has the component precompiled for the target (the `precompiled`
# feature): a process's first call loads code instead of compiling for a second or
# more. Prints the library's size.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

musl="${RENDER_STORE_MUSL:-}"
backends="${RENDER_STORE_BACKENDS-s3 gcs azure}"
profile="${RENDER_STORE_PROFILE:-dist}"
precompiled=1
while [ $# -gt 0 ]; do
    case "$1" in
        --musl) musl=1 ;;
        --backends) backends="$2"; shift ;;
        --profile) profile="$2"; shift ;;
        --no-precompiled) precompiled= ;;
        *) echo "build.sh: unknown argument $1 (--musl, --backends LIST, --profile NAME, --no-precompiled)" >&2; exit 2 ;;
    esac
    shift
done

if command -v go >/dev/null; then
    goos="$(go env GOOS)" goarch="$(go env GOARCH)"
else
    goos="$(uname -s | tr '[:upper:]' '[:lower:]')"
    case "$(uname -m)" in
        x86_64) goarch=amd64 ;;
        aarch64 | arm64) goarch=arm64 ;;
        *) goarch="$(uname -m)" ;;
    esac
fi
case "$goarch" in
    amd64) arch=x86_64 ;;
    arm64) arch=aarch64 ;;
    *) echo "build.sh: no Rust target known for GOARCH=$goarch" >&2; exit 2 ;;
esac
case "$goos" in
    linux)
        if [ -n "$musl" ]; then
            triple="$arch-unknown-linux-musl" folder="linux-$goarch-musl"
        else
            triple="$arch-unknown-linux-gnu" folder="linux-$goarch"
        fi ;;
    darwin) triple="$arch-apple-darwin" folder="darwin-$goarch" ;;
    *) echo "build.sh: no Rust target known for GOOS=$goos" >&2; exit 2 ;;
esac
if [ -n "$musl" ] && [ "$goos" != linux ]; then
    echo "build.sh: --musl is for Linux" >&2
    exit 2
fi

features="${precompiled:+precompiled}"
for b in $backends; do
    case "$b" in
        s3 | gcs | azure) features="$features $b" ;;
        *) echo "build.sh: unknown backend $b (s3, gcs, azure)" >&2; exit 2 ;;
    esac
done

# On Linux with glibc the workspace's .cargo/config.toml has getrandom(2) called
# directly (a static program's dlsym finds nothing, and an empty image has no
# /dev/urandom to fall back on); musl links it statically anyway.
if [ -n "$musl" ]; then
    # C code of the dependencies (aws-lc's) is compiled for musl too.
    cc_var="CC_$(echo "$triple" | tr '-' '_')"
    if [ -z "${!cc_var:-}" ]; then
        if ! command -v musl-gcc >/dev/null; then
            echo "build.sh: --musl needs musl-gcc (apt-get install musl-tools)" >&2
            exit 2
        fi
        export "$cc_var=musl-gcc"
    fi
fi

cd "$root"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
out_profile="$profile"
[ "$profile" = dev ] && out_profile=debug
# The dev profile for this machine's own target shares the workspace's build; anything
# else has a folder of its own.
host="$(rustc -vV | sed -n 's/^host: //p')"
if [ "$profile" = dev ] && [ "$triple" = "$host" ]; then
    target_args=()
    built="$target_dir/$out_profile/librender_store_capi.a"
else
    target_args=(--target "$triple")
    built="$target_dir/$triple/$out_profile/librender_store_capi.a"
fi
if [ "$profile" = dev ]; then
    echo "build.sh: cargo build --profile $profile ${target_args[*]} -p render-store-capi --features \"$features\"" >&2
    cargo build --quiet --profile "$profile" "${target_args[@]}" \
        -p render-store-capi --no-default-features --features "$features"
else
    # The package's crate types include rlib, and cargo runs no LTO for a crate that
    # is an rlib too (its other crate types get every dependency's objects as they
    # are): the static library alone is asked for, so the profile's LTO runs.
    echo "build.sh: cargo rustc --profile $profile ${target_args[*]} -p render-store-capi --lib --crate-type staticlib --features \"$features\"" >&2
    cargo rustc --quiet --profile "$profile" "${target_args[@]}" \
        -p render-store-capi --lib --crate-type staticlib --no-default-features --features "$features"
fi

mkdir -p "$here/build/include" "$here/build/$folder"
cp "$root/host/capi/include/render_store.h" "$here/build/include/render_store.h"
lib="$here/build/$folder/librender_store_capi.a"
# Debug information only: the symbols a linker resolves stay.
strip --strip-debug -o "$lib.tmp" "$built" 2>/dev/null || cp "$built" "$lib.tmp"
mv "$lib.tmp" "$lib"
# What the library was built with, for check-module.sh's timings (cargo features only).
echo "$features" | tr ' ' '\n' | sed '/^$/d' >"$lib.features"
size=$(stat -c %s "$lib" 2>/dev/null || stat -f %z "$lib")
kind="compiled at a process's first call"
[ -n "$precompiled" ] && kind="component precompiled"
echo "build.sh: $lib: $size bytes ($((size / 1024 / 1024)) MiB; backends: ${backends:-none}; profile $profile; $kind)"
