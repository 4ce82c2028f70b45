#!/usr/bin/env bash
# The Python host's interop tests: a venv with requirements.txt (made once, reinstalled
# only when that file changes), the component written by the Rust CLI, then pytest.
#
#   RENDER_STORE_BIN      the CLI (default: target/debug/render-store of this checkout)
#   RENDER_STORE_INTEROP_VENV  the venv (default: ${TMPDIR:-/tmp}/render-store-interop-venv)
#   PYTHON                the interpreter that makes the venv (default: python3)
# Arguments go to pytest.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${RENDER_STORE_INTEROP_VENV:-${TMPDIR:-/tmp}/render-store-interop-venv}"
bin="${RENDER_STORE_BIN:-$(dirname "$0")/../../target/debug/render-store}"

if [ ! -x "$bin" ] || [ -d "$bin" ]; then
    echo "run.sh: no render-store CLI at $bin" >&2
    echo "run.sh: build it with 'cargo build -p render-store-cli --bin render-store' or set RENDER_STORE_BIN" >&2
    exit 2
fi
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"

want="$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)"
stamp="$venv/.requirements.sha256"
if [ ! -x "$venv/bin/python" ]; then
    echo "run.sh: creating the venv $venv"
    "${PYTHON:-python3}" -m venv "$venv"
fi
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
    echo "run.sh: installing requirements.txt into $venv"
    "$venv/bin/python" -m pip install --disable-pip-version-check --quiet -r "$here/requirements.txt"
    echo "$want" >"$stamp"
else
    echo "run.sh: reusing the venv $venv"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/render-store-interop.XXXXXX")"
trap 'rm -rf "$work"' EXIT
"$bin" component --out "$work/render_store.wasm" >/dev/null

export RENDER_STORE_BIN="$bin"
export RENDER_STORE_WASM="$work/render_store.wasm"
export PYTHONDONTWRITEBYTECODE=1
cd "$here"
"$venv/bin/python" -m pytest -p no:cacheprovider "$@"
