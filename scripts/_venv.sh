# shellcheck shell=bash
# Sourced by scripts/run and scripts/test: create .venv if missing and install a
# requirements file into it, skipping the install when nothing changed since the
# last successful one (sha256 stamp kept inside .venv).
#
#   ensure_venv requirements.txt          # runtime
#   ensure_venv requirements-dev.txt      # runtime + test tools
#
# Env: PYTHON (interpreter used to create the venv; default python3.11, else python3),
#      VENV (default <repo>/.venv).

ROOT="${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
VENV="${VENV:-$ROOT/.venv}"

_log() { printf '[%s] %s\n' "$(basename "$0")" "$*" >&2; }
die() { _log "ERROR: $*"; exit 1; }

_pick_python() {
    if [[ -n "${PYTHON:-}" ]]; then echo "$PYTHON"; return; fi
    local c
    for c in python3.11 python3; do
        if command -v "$c" >/dev/null 2>&1 &&
            "$c" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
            echo "$c"; return
        fi
    done
    die "no python3.11 (or newer python3) on PATH; set PYTHON=/path/to/python3.11"
}

_req_hash() {
    # hash of the requirements file plus every file it pulls in with -r
    local f="$1"
    {
        cat "$ROOT/$f"
        { grep -E '^\s*-r\s+' "$ROOT/$f" || true; } | awk '{print $2}' |
            while read -r inc; do cat "$ROOT/$inc"; done
    } | sha256sum | cut -d' ' -f1
}

ensure_venv() {
    local req="$1" py stamp want
    if [[ ! -x "$VENV/bin/python" ]]; then
        py="$(_pick_python)"
        _log "creating $VENV with $py"
        if ! "$py" -m venv "$VENV" 2>/dev/null; then
            rm -rf "$VENV"
            # Debian's python3.11 ships venv/ensurepip separately.
            if [[ $EUID -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
                _log "installing python3-venv (venv creation failed)"
                DEBIAN_FRONTEND=noninteractive apt-get update -q
                DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv "python3.11-venv" || true
            fi
            "$py" -m venv "$VENV" || die "cannot create a virtualenv with $py"
        fi
    fi
    stamp="$VENV/.stamp-$req"
    want="$(_req_hash "$req")"
    if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
        return 0
    fi
    _log "installing $req into $VENV"
    # CPU torch on its own first, so that resolving the rest can never pull a CUDA build.
    if ! "$VENV/bin/python" -c 'import torch' 2>/dev/null; then
        local torch_pin
        torch_pin="$(grep -E '^torch==' "$ROOT/requirements.txt" | head -1)"
        [[ -n "$torch_pin" ]] && { "$VENV/bin/python" -m pip install -q "$torch_pin" || die "pip install $torch_pin failed"; }
    fi
    "$VENV/bin/python" -m pip install -q -r "$ROOT/$req" || die "pip install -r $req failed"
    echo "$want" >"$stamp"
    # requirements-dev.txt includes requirements.txt: that one is now satisfied too.
    if [[ "$req" != requirements.txt ]] && grep -qE '^\s*-r\s+requirements\.txt' "$ROOT/$req"; then
        _req_hash requirements.txt >"$VENV/.stamp-requirements.txt"
    fi
}
