#!/usr/bin/env bash
# The Python package convoy-render-store, tested as users get it: the wheel is built
# with the Rust host's C library inside (cargo builds it), installed into a fresh venv
# that holds nothing else, where it opens a file:// store the CLI wrote and an s3://
# store on the emulator and reproduces renderRefs; the sdist is made and a wheel built
# from its Rust sources reproduces them too; then the wheel is installed into the test venv,
# where pytest runs tests/ against the installed package (the source folder is not on
# the path). The S3 emulator comes from tests/emulators (started here unless it is
# running).
#
#   RENDER_STORE_BIN      the CLI (default: target/debug/render-store of this checkout)
#   RENDER_STORE_LIBRARY  the C library the wheel carries (default: cargo builds
#                         target/debug/librender_store_capi.so, which the Go suite shares)
#   RENDER_STORE_INTEROP_VENV  the test venv (default: ${TMPDIR:-/tmp}/render-store-interop-venv)
#   PYTHON                the interpreter that makes the venvs (default: python3)
# Arguments go to pytest.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${RENDER_STORE_INTEROP_VENV:-${TMPDIR:-/tmp}/render-store-interop-venv}"
python="${PYTHON:-python3}"
target_dir=$(cd "$root" && cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
bin="${RENDER_STORE_BIN:-$target_dir/debug/render-store}"

if [ ! -x "$bin" ] || [ -d "$bin" ]; then
    echo "run.sh: no render-store CLI at $bin" >&2
    echo "run.sh: build it with 'cargo build -p render-store-cli --bin render-store' or set RENDER_STORE_BIN" >&2
    exit 2
fi
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
if [ -z "${RENDER_STORE_LIBRARY:-}" ]; then
    (cd "$root" && cargo build -q -p render-store-capi)
    RENDER_STORE_LIBRARY="$target_dir/debug/librender_store_capi.so"
fi
start=$SECONDS

want="$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)"
stamp="$venv/.requirements.sha256"
if [ ! -x "$venv/bin/python" ]; then
    echo "run.sh: creating the venv $venv"
    "$python" -m venv "$venv"
fi
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
    echo "run.sh: installing requirements.txt into $venv"
    "$venv/bin/python" -m pip uninstall --disable-pip-version-check --quiet -y wasmtime 2>/dev/null || true
    "$venv/bin/python" -m pip install --disable-pip-version-check --quiet -r "$here/requirements.txt"
    echo "$want" >"$stamp"
else
    echo "run.sh: reusing the venv $venv"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/render-store-python.XXXXXX")"
stop_emulators=
cleanup() {
    rm -rf "$work"
    if [ -n "$stop_emulators" ]; then "$root/tests/emulators/stop.sh"; fi
}
trap cleanup EXIT
# The emulators of tests/emulators: started here unless they are running (then they
# are left running), whatever URL the environment names (tests/run exports the one of
# its own run, stopped by then).
emulators="${RENDER_STORE_EMULATORS:-${TMPDIR:-/tmp}/render-store-emulators}"
if ! { [ -f "$emulators/s3.pid" ] && kill -0 "$(cat "$emulators/s3.pid")" 2>/dev/null; }; then
    "$root/tests/emulators/start.sh"
    stop_emulators=1
fi
# shellcheck source=/dev/null
. "$emulators/env.sh"

# 1. The wheel, carrying the C library.
RENDER_STORE_LIBRARY="$RENDER_STORE_LIBRARY" "$venv/bin/python" -m pip wheel \
    --disable-pip-version-check --quiet --no-deps -w "$work/dist" "$here"
wheel="$(ls "$work"/dist/convoy_render_store-*.whl)"
case "$(basename "$wheel")" in
    convoy_render_store-0.9.0-py3-none-manylinux_2_*_x86_64.whl) ;;
    *) echo "run.sh: the wheel is $(basename "$wheel"); expected a py3-none-manylinux_2_N_x86_64 wheel" >&2
       exit 1 ;;
esac
echo "run.sh: built $(basename "$wheel") ($(stat -c %s "$wheel") bytes)"
built=$SECONDS

# 2. A fresh venv with the wheel alone: the README's example, a store the CLI wrote,
#    the S3 emulator, and renderRefs it is not given.
"$python" -m venv "$work/fresh"
"$work/fresh/bin/python" -m pip install --disable-pip-version-check --quiet "$wheel"
installed="$("$work/fresh/bin/python" -m pip list --format freeze --disable-pip-version-check |
    grep -v -E '^(pip|setuptools|wheel)==' | sort | tr '\n' ' ')"
if [ "$installed" != "convoy-render-store==0.9.0 " ]; then
    echo "run.sh: the fresh venv holds $installed; expected convoy-render-store alone" >&2
    exit 1
fi
(cd "$work" && env -u RENDER_STORE_LIBRARY "$work/fresh/bin/python" "$here/examples/quickstart.py") >"$work/quickstart.out"
if ! grep -q '^gc kept 1 render(s), deleted 0$' "$work/quickstart.out"; then
    echo "run.sh: examples/quickstart.py printed:" >&2
    cat "$work/quickstart.out" >&2
    exit 1
fi
cli_store="$work/cli-store"
ref=$("$bin" --render-store-url "file://$cli_store?create_dir=true" put prod/ingress \
    "$root/tests/real-renders/ingress-nginx-cloud.yaml")
"$bin" --render-store-url "file://$cli_store" record prod/ingress "$ref" --summary 'from the CLI' \
    --synced-at 2026-01-01T00:00:00Z >/dev/null
(cd "$work" && env -u RENDER_STORE_LIBRARY "$work/fresh/bin/python" - "$root/tests/real-renders" \
    "file://$cli_store" "$ref" <<'PY'
import json, sys, uuid
from pathlib import Path
import render_store as rs

renders, url, ref = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
store = rs.open(url)
(entry,) = store.list_history("prod/ingress")
assert (entry.render_ref, entry.summary) == (ref, "from the CLI"), entry
assert rs.sha256_hex(store.get_render("prod/ingress", ref)) == ref.split(":")[1]
# The renderRefs of the real renders, computed here, equal Go's.
for r in json.loads((renders / "expected.json").read_text())["renders"]:
    assert rs.yaml_render_ref((renders / r["yaml"]).read_bytes()) == r["renderRef"], r["name"]
# The controller's S3 store, on the emulator.
s3 = rs.open(__import__("os").environ["RENDER_STORE_TEST_S3_URL"])
release = f"fresh/{uuid.uuid4().hex[:12]}"
got = s3.put_render_yaml(release, (renders / "ingress-nginx-cloud.yaml").read_bytes())
assert got == ref and s3.get_render(release, got) == store.get_render("prod/ingress", ref)
assert s3.delete_release(release) == 1
print("fresh venv: file:// store of the CLI, s3:// on the emulator, Go's renderRefs")
PY
)
echo "run.sh: examples/quickstart.py and the store checks ran in a fresh venv with only the wheel"
fresh=$SECONDS

# 3. The sdist: the Rust sources of the library inside, a wheel built from it with cargo
#    (the debug profile, in this checkout's target folder), renderRefs as Go's.
"$venv/bin/python" -m build --sdist --outdir "$work/sdist" "$here" >/dev/null
sdist="$(ls "$work"/sdist/convoy_render_store-*.tar.gz)"
tar tzf "$sdist" >"$work/sdist.list"
for inside in rust/Cargo.toml rust/Cargo.lock rust/wit/render-store.wit rust/host/capi/src/lib.rs \
    rust/host/render-store/build.rs rust/guest/src/lib.rs; do
    if ! grep -qx "convoy_render_store-0.9.0/$inside" "$work/sdist.list"; then
        echo "run.sh: the sdist lacks $inside" >&2
        exit 1
    fi
done
mkdir "$work/unpacked"
tar xzf "$sdist" -C "$work/unpacked"
CARGO_TARGET_DIR="$target_dir" RENDER_STORE_CARGO_PROFILE=dev env -u RENDER_STORE_LIBRARY \
    "$venv/bin/python" -m pip wheel --disable-pip-version-check --quiet --no-deps \
    -w "$work/from-sdist" "$work/unpacked/convoy_render_store-0.9.0"
"$python" -m venv "$work/sdist-venv"
"$work/sdist-venv/bin/python" -m pip install --disable-pip-version-check --quiet "$work"/from-sdist/*.whl
(cd "$work" && "$work/sdist-venv/bin/python" - "$root/tests/real-renders" <<'PY'
import json, sys
from pathlib import Path
import render_store as rs

renders = Path(sys.argv[1])
for r in json.loads((renders / "expected.json").read_text())["renders"]:
    assert rs.yaml_render_ref((renders / r["yaml"]).read_bytes()) == r["renderRef"], r["name"]
PY
)
echo "run.sh: $(basename "$sdist") carries the library's Rust sources; a wheel built from it gives Go's renderRefs"
sdist_done=$SECONDS

# 4. The test suite against the installed wheel.
"$venv/bin/python" -m pip install --disable-pip-version-check --quiet --force-reinstall --no-deps "$wheel"
export RENDER_STORE_BIN="$bin"
export PYTHONDONTWRITEBYTECODE=1
unset RENDER_STORE_LIBRARY
status=0
(cd "$here/tests" && "$venv/bin/python" -m pytest -p no:cacheprovider "$@") || status=$?
echo "run.sh: wheel $((built - start)) s, fresh venv $((fresh - built)) s, sdist $((sdist_done - fresh)) s, tests $((SECONDS - sdist_done)) s"
exit "$status"
