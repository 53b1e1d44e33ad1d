"""The ``hv-stats`` wheel (issue 33): built from ``packaging/hv-stats`` out of the repository's own
``hvstats/``, installed in a fresh virtual environment with none of the platform's dependencies,
its ``hv-stats`` command prints the report ``manage.py agreement`` prints for the same file.

The fresh environment gets numpy, scipy and pandas from PyPI at the versions this one runs (pip's
cache makes a second run fast; the same versions make the two reports comparable digit for
digit). Offline, set ``HV_WHEELHOUSE`` to a folder of their wheels (``pip download numpy scipy
pandas -d DIR``): pip then installs from there only. Slow by nature (a build, a venv, an install).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from importlib.metadata import version
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging" / "hv-stats"
#: what the wheel may require: the statistics' own dependencies and the optional extras
ALLOWED_REQUIREMENTS = {"numpy", "scipy", "pandas", "crowd-kit", "threadpoolctl"}


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return r


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    # setuptools copies into build/lib and packs that folder whole: a module deleted from hvstats/
    # since the last build would ship; start from nothing
    shutil.rmtree(PACKAGING / "build", ignore_errors=True)
    # no build isolation: the build backend is the pinned setuptools of this environment, so the
    # build needs no network (pip wheel without --no-build-isolation fetches it from PyPI)
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            str(PACKAGING),
            "-w",
            str(out),
        ]
    )
    (found,) = out.glob("hv_stats-*.whl")
    return found


@pytest.fixture(scope="module")
def venv(tmp_path_factory, wheel) -> Path:
    home = tmp_path_factory.mktemp("clean") / "venv"
    _run([sys.executable, "-m", "venv", str(home)])
    pins = [f"{name}=={version(name)}" for name in ("numpy", "scipy", "pandas")]
    source = ["--no-index", "--find-links", os.environ["HV_WHEELHOUSE"]] if os.environ.get("HV_WHEELHOUSE") else []
    pip = [str(home / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    _run([*pip, *source, str(wheel), *pins], timeout=900)
    return home


def test_the_wheel_holds_hvstats_only(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    dist_info = [n for n in names if n.split("/")[0].endswith(".dist-info")]
    package = sorted(n for n in names if n not in dist_info)
    # every module of hvstats/, nothing else: no tests, no platform room, no stale build output
    assert package == sorted(f"hvstats/{p.name}" for p in (ROOT / "hvstats").glob("*.py"))
    meta = zipfile.ZipFile(wheel).read(next(n for n in dist_info if n.endswith("/METADATA"))).decode()
    assert "Name: hv-stats" in meta
    required = {
        line.split(":", 1)[1].strip().split(";")[0] for line in meta.splitlines() if line.startswith("Requires-Dist:")
    }
    names_only = {r.split(">")[0].split("=")[0].split("<")[0].strip().lower() for r in required}
    assert {"numpy", "scipy", "pandas"} <= names_only <= ALLOWED_REQUIREMENTS
    assert 'extra == "latent"' in meta  # crowd-kit only with the extra
    entry = zipfile.ZipFile(wheel).read(next(n for n in dist_info if n.endswith("/entry_points.txt"))).decode()
    assert "hv-stats = hvstats.cli:main" in entry


def test_the_clean_environment_has_no_platform(venv):
    py = str(venv / "bin" / "python")
    for platform_module in ("django", "celery", "torch", "rest_framework", "crowdkit"):
        r = subprocess.run([py, "-c", f"import {platform_module}"], capture_output=True, text=True, cwd=venv)
        assert r.returncode != 0 and "ModuleNotFoundError" in r.stderr, platform_module
    where = _run([py, "-c", "import hvstats; print(hvstats.__file__)"], cwd=venv).stdout.strip()
    assert Path(where).is_relative_to(venv)  # the installed package, not the repository's
    # latent truth without its extra says what to install
    r = subprocess.run(
        [py, "-c", "import hvstats.latent as l; l.latent_truth([[0, 1], [1, 1], [0, 0]])"],
        capture_output=True,
        text=True,
        cwd=venv,
    )
    assert r.returncode != 0 and "hv-stats[latent]" in r.stderr


def _sample(tmp_path: Path) -> tuple[Path, Path]:
    """The same ratings, long and wide: 60 pairs, three humans on a random half of them (pi 0.5),
    a judge on all, two fields (a 1-5 score and a yes/no), two countries."""
    import numpy as np

    rng = np.random.default_rng(33)
    long = ["item,rater,rater_kind,country,pi,field,value"]
    wide = ["item,rater,rater_kind,country,pi,score,ok"]
    for i in range(60):
        truth, country = int(rng.integers(1, 6)), "CN" if i % 2 else "DE"
        raters = [("gpt", "model")] + ([(f"h{k}", "human") for k in range(3)] if rng.random() < 0.5 else [])
        for r, kind in raters:
            score = int(np.clip(truth + rng.integers(-1, 2), 1, 5))
            ok = "yes" if (truth >= 3) != (rng.random() < 0.15) else "no"
            long += [f"p{i},{r},{kind},{country},0.5,score,{score}", f"p{i},{r},{kind},{country},0.5,ok,{ok}"]
            wide.append(f"p{i},{r},{kind},{country},0.5,{score},{ok}")
    (tmp_path / "long.csv").write_text("\n".join(long) + "\n")
    (tmp_path / "wide.csv").write_text("\n".join(wide) + "\n")
    return tmp_path / "long.csv", tmp_path / "wide.csv"


def _manage_py(*args) -> str:
    from django.core.management import call_command

    out = io.StringIO()
    call_command("agreement", *map(str, args), stdout=out)
    return out.getvalue()


def test_hv_stats_prints_what_manage_py_agreement_prints(venv, tmp_path):
    long, wide = _sample(tmp_path)
    hv_stats = str(venv / "bin" / "hv-stats")
    args = ["--by", "country", "--judge", "gpt", "--bootstrap", "200", "--active", "--half-width", "0.2"]
    installed = json.loads(_run([hv_stats, str(long), *args], cwd=venv).stdout)
    platform = json.loads(_manage_py(long, *args))
    assert installed == platform
    assert installed["fields"]["score"]["judges_vs_humans"]["gpt"]["alt_test"]["n_items"] > 0
    assert installed["active"]["fields"]["score"]["judges"]["gpt"]["estimate"] is not None
    # the wide file, the subcommand form and a text format: the same text
    md = ["--by", "country", "--bootstrap", "50", "--format", "markdown"]
    assert _run([hv_stats, "agreement", str(wide), *md], cwd=venv).stdout == _manage_py(wide, *md)
