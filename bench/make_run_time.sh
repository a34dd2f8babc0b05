#!/bin/bash
# `make run` from nothing: a fresh clone of REPO at REF in DIR, timed until /health answers on
# PORT, then the venv's size. The server is stopped at the end (its process group).
#   bench/make_run_time.sh /tmp/runclone main 18731 [REPO]
# COLD=1: empty pip and uv caches of its own (in DIR), as on a machine that never installed.
set -u
DIR=$1; REF=$2; PORT=$3; REPO=${4:-$(git rev-parse --show-toplevel)}
rm -rf "$DIR"; git clone -q "$REPO" "$DIR" && cd "$DIR" && git checkout -q "$REF" || exit 1
export OMOIDE_DATA_DIR="$DIR/data" OMOIDE_PORT=$PORT
[ -n "${COLD:-}" ] && export PIP_CACHE_DIR="$DIR/.cache/pip" UV_CACHE_DIR="$DIR/.cache/uv"
start=$(date +%s.%N)
setsid make run > "$DIR/make.log" 2>&1 &
PID=$!
until curl -fsS "http://127.0.0.1:$PORT/health" -o /dev/null 2>/dev/null; do
  kill -0 $PID 2>/dev/null || { echo "make run died"; tail -20 "$DIR/make.log"; exit 1; }
  sleep 0.5
done
end=$(date +%s.%N)
echo "ref=$REF seconds_to_health=$(echo "$end - $start" | bc) venv_mb=$(du -sm "$DIR/.venv" | cut -f1)"
uptime
kill -- -$PID 2>/dev/null
