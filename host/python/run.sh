#!/usr/bin/env bash
# The Python package convoy-render-store, tested as users get it: the wheel is built with
# the component inside, installed into a fresh venv (where it pulls in only wasmtime)
# to run examples/quickstart.py, and installed into the test venv, where pytest runs
# tests/ against the installed package (the source folder is not on the path).
#
#   RENDER_STORE_BIN      the CLI (default: target/debug/render-store of this checkout);
#                         it writes the component the wheel carries, and the tests run it
#   RENDER_STORE_INTEROP_VENV  the test venv (default: ${TMPDIR:-/tmp}/render-store-interop-venv)
#   PYTHON                the interpreter that makes the venvs (default: python3)
# Arguments go to pytest.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${RENDER_STORE_INTEROP_VENV:-${TMPDIR:-/tmp}/render-store-interop-venv}"
bin="${RENDER_STORE_BIN:-$here/../../target/debug/render-store}"
python="${PYTHON:-python3}"

if [ ! -x "$bin" ] || [ -d "$bin" ]; then
    echo "run.sh: no render-store CLI at $bin" >&2
    echo "run.sh: build it with 'cargo build -p render-store-cli --bin render-store' or set RENDER_STORE_BIN" >&2
    exit 2
fi
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
start=$SECONDS

want="$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)"
stamp="$venv/.requirements.sha256"
if [ ! -x "$venv/bin/python" ]; then
    echo "run.sh: creating the venv $venv"
    "$python" -m venv "$venv"
fi
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
    echo "run.sh: installing requirements.txt into $venv"
    "$venv/bin/python" -m pip install --disable-pip-version-check --quiet -r "$here/requirements.txt"
    echo "$want" >"$stamp"
else
    echo "run.sh: reusing the venv $venv"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/render-store-python.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# 1. The wheel, carrying the component this CLI writes.
"$bin" component --out "$work/render_store.wasm" >/dev/null
RENDER_STORE_WASM="$work/render_store.wasm" "$venv/bin/python" -m pip wheel \
    --disable-pip-version-check --quiet --no-deps -w "$work/dist" "$here"
wheel="$(ls "$work"/dist/convoy_render_store-*.whl)"
echo "run.sh: built $(basename "$wheel") ($(stat -c %s "$wheel") bytes)"
built=$SECONDS

# 2. A fresh venv: the wheel and its one dependency, then the README's example.
"$python" -m venv "$work/fresh"
"$work/fresh/bin/python" -m pip install --disable-pip-version-check --quiet "$wheel"
installed="$("$work/fresh/bin/python" -m pip list --format freeze --disable-pip-version-check |
    grep -v -E '^(pip|setuptools|wheel)==' | sort | tr '\n' ' ')"
if [ "$installed" != "convoy-render-store==0.6.0 wasmtime==50.0.1 " ]; then
    echo "run.sh: the fresh venv holds $installed; expected convoy-render-store and wasmtime only" >&2
    exit 1
fi
(cd "$work" && env -u RENDER_STORE_WASM "$work/fresh/bin/python" "$here/examples/quickstart.py") >"$work/quickstart.out"
if ! grep -q '^gc kept 1 render(s), deleted 0$' "$work/quickstart.out"; then
    echo "run.sh: examples/quickstart.py printed:" >&2
    cat "$work/quickstart.out" >&2
    exit 1
fi
echo "run.sh: examples/quickstart.py ran in a fresh venv with only the wheel and wasmtime"
fresh=$SECONDS

# 3. The test suite against the installed wheel.
"$venv/bin/python" -m pip install --disable-pip-version-check --quiet --force-reinstall --no-deps "$wheel"
export RENDER_STORE_BIN="$bin"
export PYTHONDONTWRITEBYTECODE=1
unset RENDER_STORE_WASM
status=0
(cd "$here/tests" && "$venv/bin/python" -m pytest -p no:cacheprovider "$@") || status=$?
echo "run.sh: wheel $((built - start)) s, fresh venv $((fresh - built)) s, tests $((SECONDS - fresh)) s"
exit "$status"
