"""``perf/gpu_check.py`` (issue 28), the one script a GPU machine runs, runs on CPU too: with
``--quick`` (small models and batches) it writes its JSON with every section and no error, and
the equality checks hold on CPU. Slow (a subprocess building five small models): about two
minutes on a busy 2-core machine."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_gpu_check_runs_quick_on_cpu_and_writes_every_section(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    out = tmp_path / "check.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "perf" / "gpu_check.py"), "--quick", "--device", "cpu", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads(out.read_text())
    assert {"device", "card", "torch", "transformers", "seconds", "under_5_minutes"} <= set(report)
    assert report["device"] == "cpu" and report["quick"] is True
    for name in ("text_equality", "vlm_equality", "generation", "clip", "ahead"):
        assert "error" not in report[name], report[name]
    for name in ("text_equality", "vlm_equality"):
        r = report[name]
        assert r["static"]["cache_used"] == "static" and r["dynamic"]["cache_used"] == "dynamic"
        assert r["static"]["batched_equals_one_by_one"] and r["dynamic"]["batched_equals_one_by_one"]
        assert r["static_equals_dynamic"]
    g = report["generation"]
    for cache in ("static", "dynamic"):
        for bs in (1, 4, 8):
            assert {"tokens_per_s", "ms_per_step", "batches", "cache"} <= set(g[f"{cache}_batch{bs}"])
            assert g[f"{cache}_batch{bs}"]["cache"] == cache
    assert {"images_per_s_float32", "images_per_s_bfloat16", "bf16_vs_fp32_min_cosine"} <= set(report["clip"])
    assert report["ahead"]["unexpected_errors"] == [] and report["ahead"]["items_per_s"] > 0
    assert "generation static_batch1" in proc.stdout  # the summary is printed
