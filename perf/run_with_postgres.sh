#!/usr/bin/env bash
# Start a throwaway PostgreSQL on a free loopback port (temp dir, same approach as scripts/test),
# export DATABASE_URL for it, run the given command, then stop the server and remove the dir.
#
#   perf/run_with_postgres.sh .venv/bin/python perf/submit_next.py
#   PERF_PG_DURABLE=1 perf/run_with_postgres.sh ...   # keep fsync/synchronous_commit on
#
# By default the server runs like the test server: fsync=off, synchronous_commit=off,
# full_page_writes=off (commit latency excluded). PERF_PG_DURABLE=1 keeps PostgreSQL's
# durable defaults. Prints the server version on stderr. Exits with the command's status.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PY:-$ROOT/.venv/bin/python}"
_log() { printf '[run_with_postgres] %s\n' "$*" >&2; }
die() { _log "ERROR: $*"; exit 1; }
(($#)) || die "usage: perf/run_with_postgres.sh COMMAND [ARGS...]"

PG_BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1 || true)"
if [[ -z "$PG_BIN" ]] && command -v pg_config >/dev/null 2>&1; then PG_BIN="$(pg_config --bindir)"; fi
[[ -n "$PG_BIN" && -x "$PG_BIN/initdb" ]] || die "PostgreSQL server binaries (initdb) not found (run scripts/test once as root to install them)"

TMP_ROOT="$(mktemp -d "${TMPDIR:-/tmp}/hv-perf.XXXXXX")"
chmod 755 "$TMP_ROOT"
PG_DIR="$TMP_ROOT/pg"
PG_STARTED=0
RUN_AS=()

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if ((PG_STARTED)); then
        "${RUN_AS[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w -t 30 stop >/dev/null 2>&1 ||
            _log "warning: pg_ctl stop failed"
    fi
    rm -rf "$TMP_ROOT"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$PG_DIR"
if [[ $EUID -eq 0 ]]; then
    id postgres >/dev/null 2>&1 || die "running as root but there is no 'postgres' user"
    if command -v runuser >/dev/null 2>&1; then RUN_AS=(runuser -u postgres --); else RUN_AS=(sudo -u postgres); fi
    chown postgres: "$PG_DIR"
fi
chmod 700 "$PG_DIR"
PG_PORT="$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')"
"${RUN_AS[@]}" "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 \
    --no-sync >"$TMP_ROOT/initdb.log" 2>&1 ||
    "${RUN_AS[@]}" "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth=trust -E UTF8 --locale=C \
        --no-sync >"$TMP_ROOT/initdb.log" 2>&1 ||
    { cat "$TMP_ROOT/initdb.log" >&2; die "initdb failed"; }
PG_OPTS="-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_DIR -c max_connections=50 -c shared_buffers=512MB"
if [[ "${PERF_PG_DURABLE:-0}" != 1 ]]; then
    PG_OPTS+=" -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
fi
PG_STARTED=1
"${RUN_AS[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 -o "$PG_OPTS" start >/dev/null ||
    { cat "$PG_DIR/server.log" >&2 || true; die "PostgreSQL did not start"; }
"$PG_BIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres hv_perf || die "createdb failed"
_log "$("$PG_BIN/postgres" --version) on 127.0.0.1:$PG_PORT (durable=${PERF_PG_DURABLE:-0})"

export DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/hv_perf"
export HV_PERF_PG_DURABLE="${PERF_PG_DURABLE:-0}"
set +e
"$@"
rc=$?
set -e
exit "$rc"
