#!/usr/bin/env bash
# Fuzzes render-store-guest: guest/fuzz/run.sh SECONDS [TARGET...]
#
# Installs nightly Rust and cargo-fuzz when missing, builds the targets, runs each for
# SECONDS seconds from the committed seeds in guest/fuzz/corpus/<target>/ (read only: new
# inputs go to a temporary folder), prints "TARGET: N executions in S s" for each, and
# exits non-zero if any target crashed. A crash's input is kept in
# fuzz/artifacts/<target>/ (ignored by git); reproduce it with
#   cargo +nightly fuzz run TARGET guest/fuzz/artifacts/TARGET/crash-...
set -euo pipefail

CARGO_FUZZ_VERSION=0.13.2
ALL_TARGETS=(canonical_roundtrip decode_encode keys yaml_stream)

if [[ $# -lt 1 || ! $1 =~ ^[0-9]+$ || $1 -lt 1 ]]; then
    echo "usage: $0 SECONDS [TARGET...]   (targets: ${ALL_TARGETS[*]})" >&2
    exit 2
fi
seconds=$1
shift
if [[ $# -gt 0 ]]; then
    targets=("$@")
else
    targets=("${ALL_TARGETS[@]}")
fi

fuzz_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$fuzz_dir"
# The fuzz crate's own target dir (guest/fuzz/target), never the workspace's target/.
export CARGO_TARGET_DIR="$fuzz_dir/target"

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    rustup toolchain install nightly --profile minimal
fi
if ! cargo +nightly fuzz --version 2>/dev/null | grep -qx "cargo-fuzz $CARGO_FUZZ_VERSION"; then
    cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
fi

start=$(date +%s)
if [[ ${#targets[@]} -eq ${#ALL_TARGETS[@]} ]]; then
    cargo +nightly fuzz build
else
    for target in "${targets[@]}"; do
        cargo +nightly fuzz build "$target"
    done
fi
echo "build: $(($(date +%s) - start)) s"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

failed=()
summary=()
for target in "${targets[@]}"; do
    seeds="$fuzz_dir/corpus/$target"
    mkdir -p "$work/$target"
    log="$work/$target.log"
    echo "== $target: $seconds s"
    status=0
    # The first folder receives new inputs; the seed folder is only read.
    cargo +nightly fuzz run "$target" "$work/$target" "$seeds" -- \
        -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 \
        >"$log" 2>&1 || status=$?
    if [[ $status -ne 0 ]]; then
        tail -n 80 "$log"
    else
        grep -E '^(INFO: seed corpus|Done |stat::)' "$log" || true
    fi
    done_line=$(grep -E '^Done [0-9]+ runs in [0-9]+ second' "$log" | tail -n 1 || true)
    if [[ -n $done_line ]]; then
        runs=$(awk '{print $2}' <<<"$done_line")
        secs=$(awk '{print $5}' <<<"$done_line")
        line="$target: $runs executions in $secs s"
    else
        runs=$(grep -oE '^stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || true)
        line="$target: ${runs:-?} executions before it stopped"
    fi
    if [[ $status -ne 0 ]]; then
        line="$line -- CRASHED (exit $status; input in fuzz/artifacts/$target/)"
        failed+=("$target")
    fi
    summary+=("$line")
done

echo "== summary"
printf '%s\n' "${summary[@]}"
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "crashed: ${failed[*]}" >&2
    exit 1
fi
