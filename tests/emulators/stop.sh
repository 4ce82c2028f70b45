#!/usr/bin/env bash
# Stops the emulators start.sh started, by the PIDs it recorded.
set -u
DIR=${RENDER_STORE_EMULATORS:-${TMPDIR:-/tmp}/render-store-emulators}
for name in s3 gcs gcs-proxy azure; do
  pidfile="$DIR/$name.pid"
  [ -f "$pidfile" ] || continue
  pid=$(cat "$pidfile")
  # setsid made each emulator a process-group leader: end the whole group.
  kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
  rm -f "$pidfile"
done
