"""A protocol is a package: its paper tables load only when a report is asked for, and its demo
items and answers are data files (issue 21).

Loading the presets is on every process's path (``annotation.models`` reads the registry), so it
must not pull numpy, pandas or scipy; the tables module of each preset does, on the first call of
its ``validation_report``."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.base import LazyReport
from benchmarks.demo_data import ROOT as BENCHMARKS
from benchmarks.demo_data import DemoAnswers, DemoItems
from benchmarks.registry import PRESETS

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("numpy", "pandas", "scipy")

PROBE = (
    "import sys, django; django.setup(); import annotation.models, benchmarks.registry; "
    f"print(','.join(m for m in {HEAVY!r} if m in sys.modules) or 'none')"
)


def run_python(code: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HV_", "SECRET_KEY", "DJANGO_ALLOW_ASYNC"))}
    env.update({"DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "true"})
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def test_loading_the_models_and_presets_loads_no_numpy_or_pandas():
    r = run_python(PROBE)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "none", f"loaded at startup: {r.stdout.strip()}"


def test_the_probe_sees_a_tables_module_load_numpy():
    """The check above can fail: importing a preset's tables is what loads numpy."""
    r = run_python(PROBE.replace("benchmarks.registry;", "benchmarks.registry, benchmarks.valueground.tables;"))
    assert r.returncode == 0, r.stderr
    assert "numpy" in r.stdout


@pytest.mark.parametrize("key", list(PRESETS))
def test_every_report_names_a_function_of_its_tables_module(key):
    report = PRESETS[key].validation_report
    assert isinstance(report, LazyReport)
    package = key.split(".")[0]
    assert report.module == f"benchmarks.{package}.tables"
    assert callable(getattr(importlib.import_module(report.module), report.function))


def test_a_lazy_report_calls_its_function(monkeypatch):
    seen = []
    module = importlib.import_module("benchmarks.valueground.tables")
    monkeypatch.setattr(module, "validation_report", lambda inp: seen.append(inp) or ["table"])
    assert PRESETS["valueground.pair_quality"].validation_report("input") == ["table"]
    assert seen == ["input"]


@pytest.mark.parametrize("key", list(PRESETS))
def test_demo_items_and_answers_are_the_packages_data_files(key):
    preset = PRESETS[key]
    package, name = key.split(".")
    folder = BENCHMARKS / package / "demo"
    assert isinstance(preset.demo_items, DemoItems)
    assert (folder / f"{name}.items.jsonl").is_file()
    if preset.demo_answers:
        assert isinstance(preset.demo_answers, DemoAnswers)
        answers = json.loads((folder / f"{name}.answers.json").read_text(encoding="utf-8"))
        assert dict(preset.demo_answers) == {k: tuple(v) for k, v in answers.items()}
        assert all(isinstance(r, tuple) and len(r) == 2 for r in preset.demo_answers.values())


def test_demo_files_keep_their_text_readable():
    """UTF-8 with the papers' characters as they are (ensure_ascii=False), never \\u escapes."""
    files = sorted(BENCHMARKS.glob("*/demo/*.json*"))
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert "\\u" not in text, path
        if path.suffix == ".jsonl":
            assert all(json.loads(line) for line in text.splitlines())
        else:
            json.loads(text)


def test_demo_items_are_fresh_records_on_every_call(tmp_path):
    """The demo command and the example files may change what they get; the next call is unchanged."""
    items = PRESETS["cqbench.story"].demo_items(None)
    items[0]["story"] = "changed"
    assert PRESETS["cqbench.story"].demo_items(None)[0]["story"] != "changed"


def test_demo_items_with_images_need_a_folder():
    with pytest.raises(TypeError):
        PRESETS["valueground.pair_quality"].demo_items(None)
