#!/usr/bin/env bash
# The Go module as users build it, after build.sh laid out build/ (no network, no
# repository around it):
#
#   1. a consumer module outside the repository (a local replace of a copy of the module
#      folder alone) builds with plain `go build` and runs a sync on mem:// and file://;
#   2. CGO_ENABLED=0 stops the build with the message saying cgo and a C compiler are
#      required;
#   3. the example controller links fully statically (glibc), and runs in an empty
#      chroot (no /dev, /etc, /proc or HOME; its root file system read-only) against the
#      S3 emulator: 3 releases x 20 syncs, then a request to a port that refuses (the
#      client retries, drawing a random backoff without /dev/urandom) fails cleanly;
#   4. with RENDER_STORE_STATIC_CLI naming a static render-store binary, the CLI does
#      the same in the chroot: put, history, gc, verify and delete-release on the S3
#      emulator, and the first call's time with and without the precompiled component.
#
# The chroot steps need root, unshare(1) and chroot(1), and the emulator's environment
# (tests/emulators/start.sh, then . env.sh: RENDER_STORE_TEST_S3_URL); without them
# they are skipped, and with RENDER_STORE_REQUIRE_CHROOT=1 that fails instead.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
say() { echo "check-module.sh: $*" >&2; }
fail() { say "$*"; exit 1; }

goos="$(go env GOOS)" goarch="$(go env GOARCH)"
[ -f "$here/build/include/render_store.h" ] && [ -f "$here/build/$goos-$goarch/librender_store_capi.a" ] ||
    fail "no library in build/$goos-$goarch: run host/go/build.sh first"

work="$(mktemp -d)"
cleanup() { chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
export GOPROXY=off GOTOOLCHAIN=local GOFLAGS= GOCACHE="${GOCACHE:-$work/gocache}"

# 1. The module folder alone, copied away from the repository.
cp -r "$here" "$work/renderstore"
rm -rf "$work/renderstore/gocloudblob"
mkdir "$work/consumer"
cat >"$work/consumer/go.mod" <<'MOD'
module example.com/consumer

go 1.22

require convoy.dev/renderstore v0.0.0

replace convoy.dev/renderstore => ../renderstore
MOD
cat >"$work/consumer/main.go" <<'GO'
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	renderstore "convoy.dev/renderstore"
)

func main() {
	for _, url := range os.Args[1:] {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		store, err := renderstore.Open(ctx, url)
		if err != nil {
			panic(err)
		}
		ref, err := store.PutRender(ctx, "prod", "app", [][]byte{[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`)})
		if err != nil {
			panic(err)
		}
		if _, err := store.RecordHistory(ctx, "prod", "app", ref, time.Now(), "v1"); err != nil {
			panic(err)
		}
		plan, err := store.GC(ctx, "prod", "app", 10, renderstore.ProtectedRenders{Applied: ref}.Refs())
		if err != nil {
			panic(err)
		}
		fmt.Println(url[:4], ref[:15], len(plan.KeepHistory))
		store.Close()
		cancel()
	}
}
GO
(cd "$work/consumer" && go build -o consumer .) || fail "the consumer module does not build with plain go build"
mkdir "$work/files"
out="$("$work/consumer/consumer" mem:// "file://$work/files")"
[ "$(echo "$out" | wc -l)" = 2 ] || fail "the consumer printed: $out"
if ldd "$work/consumer/consumer" 2>/dev/null | grep -q render_store; then
    fail "the consumer links librender_store_capi dynamically"
fi
say "a consumer module outside the repository built with plain go build and ran: $(echo "$out" | tr '\n' ';')"

# 2. Without cgo: one message, saying what is needed.
if (cd "$work/consumer" && CGO_ENABLED=0 go build -o /dev/null . 2>"$work/nocgo.err"); then
    fail "CGO_ENABLED=0 built"
fi
grep -q "CGO_ENABLED=1 and a C compiler" "$work/nocgo.err" ||
    fail "CGO_ENABLED=0 failed without the message: $(cat "$work/nocgo.err")"
say "CGO_ENABLED=0: $(grep -o 'render store: [^"]*' "$work/nocgo.err" | head -1)"

# 3. A fully static controller.
(cd "$work/renderstore" &&
    go build -ldflags '-linkmode external -extldflags "-static"' -o "$work/controller" ./examples/controller \
        2>"$work/static.err") || fail "the static link failed: $(cat "$work/static.err")"
# A static program has no program interpreter (ld.so) to ask for.
static() { ! readelf -l "$1" 2>/dev/null | grep -q 'program interpreter'; }
static "$work/controller" || fail "the controller is not statically linked"
say "static controller: $(stat -c %s "$work/controller") bytes"

chroot_ok=1
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null || ! command -v chroot >/dev/null; then
    chroot_ok=
    why="not root, or no unshare/chroot"
elif [ -z "${RENDER_STORE_TEST_S3_URL:-}" ]; then
    chroot_ok=
    why="no S3 emulator (RENDER_STORE_TEST_S3_URL)"
fi
if [ -z "$chroot_ok" ]; then
    if [ "${RENDER_STORE_REQUIRE_CHROOT:-}" = 1 ]; then
        fail "the chroot runs cannot run: $why"
    fi
    say "skipping the chroot runs: $why"
    exit 0
fi

# An empty root holding one binary, read-only (a bind mount in a mount namespace of its
# own), entered with nothing of this machine's environment but the emulator's
# credentials: no /dev, /etc, /proc, HOME or cache folder.
unshare_bin="$(command -v unshare)" chroot_bin="$(command -v chroot)" mount_bin="$(command -v mount)"
# make_jail NAME FILE...: a new empty root holding the files, each at its top.
make_jail() {
    local jail="$work/jail-$1"
    shift
    mkdir "$jail"
    cp "$@" "$jail/"
    chmod -R a-w "$jail"
    echo "$jail"
}
in_chroot() { # JAIL ARGS...
    local jail="$1"
    shift
    env -i AWS_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" AWS_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY" \
        AWS_REGION="${AWS_REGION:-us-east-1}" AWS_EC2_METADATA_DISABLED=true PATH=/ \
        ${RENDER_STORE_PRECOMPILED:+RENDER_STORE_PRECOMPILED=$RENDER_STORE_PRECOMPILED} \
        "$unshare_bin" -m /bin/sh -c \
        "$mount_bin"' --bind "$1" "$1" && '"$mount_bin"' -o remount,bind,ro "$1" && exec '"$chroot_bin"' "$@"' \
        sh "$jail" "$@"
}

s3="$RENDER_STORE_TEST_S3_URL"
controller_jail="$(make_jail controller "$work/controller")"
out="$(in_chroot "$controller_jail" /controller -render-store-url "$s3" -releases 3 -syncs 20 2>&1)" ||
    fail "the static controller failed in the chroot: $out"
say "in an empty read-only chroot: $out"
# A server that refuses: the client retries with a random backoff (no /dev/urandom
# here), then the call fails as a bucket error, not a panic.
refused="${s3%%\?*}?region=us-east-1&endpoint=http://127.0.0.1:1&use_path_style=true&retries=2&retry_timeout=2s"
if out="$(in_chroot "$controller_jail" /controller -render-store-url "$refused" -releases 1 -syncs 1 2>&1)"; then
    fail "a sync against a refusing port succeeded: $out"
fi
case "$out" in
    *panic* | *ThreadRng*) fail "the retry panicked: $out" ;;
    *"persisting the render"*) say "a refusing server, retried in the chroot: $(echo "$out" | tail -c 160)" ;;
    *) fail "a refusing server: $out" ;;
esac

# The first call's time in the read-only root with no cache folder: a whole process
# making one sync on mem://, with the precompiled component and compiling at start.
controller_once() {
    local start end
    start=$(date +%s%N)
    in_chroot "$controller_jail" /controller -render-store-url mem:// -releases 1 -syncs 1 >/dev/null 2>&1 ||
        fail "a sync on mem:// in the chroot failed"
    end=$(date +%s%N)
    echo $(((end - start) / 1000000))
}
# build.sh --no-precompiled leaves the code out: then both runs compile, and say so.
as_built="precompiled"
grep -qx precompiled "$here/build/$goos-$goarch/librender_store_capi.a.features" 2>/dev/null ||
    as_built="as built (no precompiled component: build.sh --no-precompiled)"
pre=() off=()
for _ in 1 2 3; do
    pre+=("$(controller_once)")
    off+=("$(RENDER_STORE_PRECOMPILED=off controller_once)")
done
say "one sync on mem://, whole process in the read-only chroot: $as_built ${pre[*]} ms; RENDER_STORE_PRECOMPILED=off ${off[*]} ms"

# 4. The static CLI.
cli="${RENDER_STORE_STATIC_CLI:-}"
if [ -z "$cli" ]; then
    say "no RENDER_STORE_STATIC_CLI: the CLI's chroot run is skipped"
    exit 0
fi
static "$cli" || fail "$cli is not statically linked"
release="chroot/app-$$"
printf '%s\n' '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"chroot"},"data":{"v":"1"}}' >"$work/render.json"
cp "$cli" "$work/render-store"
cli_jail="$(make_jail cli "$work/render-store" "$work/render.json")"
cli_run() { in_chroot "$cli_jail" /render-store --render-store-url "$s3" "$@"; }
ref="$(cli_run put "$release" /render.json)" || fail "put in the chroot: $ref"
cli_run record "$release" "$ref" --summary chroot >/dev/null || fail "record in the chroot"
cli_run history "$release" | grep -q chroot || fail "history in the chroot"
cli_run gc "$release" --keep 1 >/dev/null || fail "gc in the chroot"
cli_run verify "$release" >/dev/null || fail "verify in the chroot"
cli_run delete-release "$release" >/dev/null || fail "delete-release in the chroot"
say "the static CLI in an empty read-only chroot: put, record, history, gc, verify, delete-release on S3"
# The first call's time, precompiled and compiled (RENDER_STORE_PRECOMPILED=off), in a
# read-only root with no cache folder.
first_call() {
    local start end
    start=$(date +%s%N)
    in_chroot "$cli_jail" /render-store ref /render.json >/dev/null || fail "ref in the chroot"
    end=$(date +%s%N)
    echo $(((end - start) / 1000000))
}
pre=(); off=()
for _ in 1 2 3; do
    pre+=("$(first_call)")
    off+=("$(RENDER_STORE_PRECOMPILED=off first_call)")
done
say "render-store ref, whole process in the read-only chroot: precompiled ${pre[*]} ms; compiled at start ${off[*]} ms"
