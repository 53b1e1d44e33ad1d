# shellcheck shell=bash
# Sourced by scripts/run and scripts/test: create .venv if missing and install a
# requirements file into it, skipping the install when nothing changed since the
# last successful one (sha256 stamp kept inside .venv).
#
#   ensure_venv requirements.txt          # web + worker runtime (no torch)
#   ensure_venv requirements-judges.txt   # + in-process model judges (CPU torch): make run
#   ensure_venv requirements-dev.txt      # + test tools: make test
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

_includes() {
    # the files a requirements file pulls in with -r, recursively (nearest first)
    local f="$1" inc
    { grep -E '^\s*-r\s+' "$ROOT/$f" || true; } | awk '{print $2}' |
        while read -r inc; do echo "$inc"; _includes "$inc"; done
}

_req_hash() {
    # hash of the requirements file plus every file it pulls in with -r
    local f="$1"
    { cat "$ROOT/$f"; _includes "$f" | while read -r inc; do cat "$ROOT/$inc"; done; } | sha256sum | cut -d' ' -f1
}

_install_cpu_torch() {
    # CPU torch on its own first, so that resolving the rest can never pull PyPI's CUDA build:
    # the +cpu wheel from pip's find-links if one is there, else from the PyTorch CPU index; a
    # machine that reaches neither gets PyPI's build (the CUDA one on Linux), said out loud.
    local version="$1"
    "$VENV/bin/python" -m pip install -q --no-deps --no-index "torch==${version}+cpu" 2>/dev/null && return 0
    _log "installing torch ${version}+cpu from https://download.pytorch.org/whl/cpu"
    "$VENV/bin/python" -m pip install -q --no-deps --timeout 20 --retries 1 \
        --index-url https://download.pytorch.org/whl/cpu "torch==${version}+cpu" 2>/dev/null && return 0
    _log "WARNING: the PyTorch CPU index is unreachable; installing torch ${version} from PyPI (on Linux the CUDA build, several GB)"
    "$VENV/bin/python" -m pip install -q --no-deps "torch==${version}" || die "cannot install torch ${version}"
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
    # pip's own lines (Collecting, Downloading with sizes, Installing) show the first run's
    # progress; CI keeps its log short (-q)
    local quiet=()
    [[ -n "${CI:-}" ]] && quiet=(-q)
    if [[ -f "$stamp" ]]; then
        _log "installing $req into $VENV (it changed since the last install)"
    else
        _log "installing $req into $VENV (first run: pip downloads and installs every pinned package; later runs skip this)"
    fi
    local torch_version
    torch_version="$(cat "$ROOT/$req" $(_includes "$req" | sed "s|^|$ROOT/|") | sed -nE 's/^torch==([0-9.]+).*/\1/p' | head -1)"
    if [[ -n "$torch_version" ]] && ! "$VENV/bin/python" -c 'import torch' 2>/dev/null; then
        _install_cpu_torch "$torch_version"
    fi
    # (a find-links folder missing on this machine is not news: those warnings are left out)
    local rc
    {
        # --no-compile: no .pyc for every module of every package now (pip's CPU on a first run
        # goes to it); Python writes them for the modules it imports, when it imports them
        if "$VENV/bin/python" -m pip install "${quiet[@]}" --no-compile --progress-bar off -r "$ROOT/$req" 2>&1; then
            echo 0 >"$VENV/.pip-status"
        else
            echo 1 >"$VENV/.pip-status"
        fi
    } | { grep -vE "^WARNING: Location '.*' is ignored" || true; } >&2
    rc="$(cat "$VENV/.pip-status")"
    rm -f "$VENV/.pip-status"
    [[ "$rc" == 0 ]] || die "pip install -r $req failed"
    echo "$want" >"$stamp"
    # the files it includes are now satisfied too
    local inc
    for inc in $(_includes "$req"); do
        _req_hash "$inc" >"$VENV/.stamp-$inc"
    done
}
