"""The AHEaD paper's constants (CULTIVate, cultivate-ahead.txt Sec. 3.1 and 4.3), in a module that
imports nothing: the judge parameters (``judges.params``) name the default tau when the models
load, and every process loads the models, so this must not pull in numpy the way the metrics
(``judges.ahead_metrics``) do (``tests/benchmarks/test_lazy_tables.py``)."""

from __future__ import annotations

# Sec. 3.1: "five dimensions: background ..., attire ..., objects, actions/interactions ... and
# spatial layout"; the extractor prompts (Tables 23-27) in this order.
DIMENSIONS: tuple[str, ...] = ("setting", "objects", "attire", "interaction", "spatial")

# Sec. 4.3: "tau is calibrated on real images: 0.52 (InternVL3), 0.67 (Qwen2.5-VL)".
TAU_INTERNVL3 = 0.52
TAU_QWEN25_VL = 0.67

__all__ = ["DIMENSIONS", "TAU_INTERNVL3", "TAU_QWEN25_VL"]
