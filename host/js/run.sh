#!/usr/bin/env bash
# The Node.js host of the render-store component, tested against the Rust host.
#
#   host/js/run.sh [node --test options...]
#
# 1. `npm ci` (pinned TypeScript, which checks the declarations) when node_modules is missing
#    or was installed from another package-lock.json / Node major version;
# 2. writes the component with the Rust CLI, and its core module and types with the Rust
#    build tool render-store-js-describe (build.mjs; only when either changed);
# 3. packs the package (npm pack), installs the tarball offline into an empty folder,
#    runs examples/quickstart.mjs there, and runs every test against that install.
#
# RENDER_STORE_BIN: the Rust CLI (default: target/debug/render-store of this checkout), with
# render-store-js-describe beside it; build both with
# `cargo build -p render-store-cli -p render-store-js-describe`.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
start=$SECONDS

for tool in node npm; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed (Node.js 20 or later is needed)" >&2; exit 1; }
done
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
  echo "run.sh: Node.js $(node --version) is too old: 20 or later is needed" >&2
  exit 1
fi

bin="${RENDER_STORE_BIN:-$here/../../target/debug/render-store}"
if [ ! -x "$bin" ]; then
  echo "run.sh: the render-store CLI is not at $bin" >&2
  echo "run.sh: build it with 'cargo build -p render-store-cli -p render-store-js-describe' or set RENDER_STORE_BIN" >&2
  exit 1
fi
RENDER_STORE_BIN="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
export RENDER_STORE_BIN

# What node_modules was installed from: the lock file and Node's major version.
wanted="$(node -e '
  const { createHash } = require("node:crypto");
  const { readFileSync } = require("node:fs");
  const h = createHash("sha256");
  for (const f of ["package.json", "package-lock.json"]) h.update(readFileSync(f));
  console.log(`${h.digest("hex")} node${process.versions.node.split(".")[0]}`);
')"
stamp=node_modules/.render-store-installed
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then
  echo "run.sh: node_modules is up to date"
else
  echo "run.sh: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$wanted" > "$stamp"
fi
installed=$SECONDS

node build.mjs
built=$SECONDS

# The package as users get it: packed, installed offline into an empty folder, the
# README's example run with plain node, then every test run against that install (from
# a copy of test/, so '@convoy/render-store' resolves to the installed package).
work="$(mktemp -d "${TMPDIR:-/tmp}/render-store-js.XXXXXX")"
trap 'rm -rf "$work"' EXIT
npm pack --silent --pack-destination "$work" >/dev/null
tarball="$(ls "$work"/convoy-render-store-*.tgz)"
mkdir "$work/app"
(cd "$work/app" && npm install --offline --no-audit --no-fund --loglevel=error "$tarball")
deps="$(node -p 'Object.keys(require(process.argv[1]).dependencies || {}).length' "$work/app/node_modules/@convoy/render-store/package.json")"
if [ "$deps" != 0 ]; then
  echo "run.sh: the package declares $deps runtime dependencies; it must have none" >&2
  exit 1
fi
cp examples/quickstart.mjs "$work/app/"
out="$(cd "$work/app" && node quickstart.mjs)"
if ! printf '%s\n' "$out" | grep -q '^gc kept 1 render(s), deleted 0$'; then
  echo "run.sh: examples/quickstart.mjs printed:" >&2
  printf '%s\n' "$out" >&2
  exit 1
fi
echo "run.sh: $(basename "$tarball") ($(stat -c %s "$tarball") bytes) installed offline; examples/quickstart.mjs ran"
# The declarations, as a TypeScript user compiles against the installed package.
cp test/types/check.mts "$work/app/"
(cd "$work/app" && node "$here/node_modules/typescript/bin/tsc" --noEmit --strict --target es2022 \
  --lib es2022,dom --module nodenext --moduleResolution nodenext check.mts) || {
  echo "run.sh: the package's TypeScript declarations do not compile (see above)" >&2
  exit 1
}
echo "run.sh: the TypeScript declarations compile under --strict"
cp -r test "$work/app/test"
packed=$SECONDS

status=0
(cd "$work/app" && RENDER_STORE_REPO="$(cd "$here/../.." && pwd)" node --test "$@" test/*.test.mjs) || status=$?
echo "run.sh: install $((installed - start)) s, build $((built - installed)) s, pack $((packed - built)) s, tests $((SECONDS - packed)) s, total $((SECONDS - start)) s"
exit "$status"
