"""The judge run page's bias checks: what one view cost before the cache and costs after it.

The verbosity check (``hvstats.bias.verbosity``: Spearman's rho of judge and humans vs
length, each with a 1,000-resample bootstrap CI, and their difference) on synthetic items, for
--items sizes: once computed (what every run-page view paid before ``judges.bias._memo``), then
through the memo a first time (computed and stored) and a second time (read back, what later
views pay). Ratios are within one run.

  .venv/bin/python perf/bias_bench.py
  .venv/bin/python perf/bias_bench.py --items 1000,5000,20000
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("SECRET_KEY", "perf")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", default="1000,5000")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import django

    django.setup()
    import numpy as np
    from django.core.cache import cache

    from hvstats import bias
    from judges.bias import _memo

    rng = np.random.default_rng(args.seed)
    print("items | computed (before) s | memo, first view s | memo, later views ms | later / before")
    for n in (int(x) for x in args.items.split(",")):
        lengths = [int(x) for x in rng.integers(100, 2000, n)]
        judge = [float(x) for x in rng.integers(1, 6, n)]
        humans = [float(x) for x in rng.random(n) * 5]
        cache.clear()
        t0 = time.perf_counter()
        bias.verbosity(lengths, judge, humans, n_boot=1000, seed=0)
        plain = time.perf_counter() - t0
        t0 = time.perf_counter()
        first = _memo(bias.verbosity, lengths, judge, humans, n_boot=1000, seed=0)
        stored = time.perf_counter() - t0
        t0 = time.perf_counter()
        again = _memo(bias.verbosity, lengths, judge, humans, n_boot=1000, seed=0)
        hit = time.perf_counter() - t0
        assert again == first
        print(f"{n} | {plain:.3f} | {stored:.3f} | {hit * 1000:.2f} | {hit / plain:.4f}")


if __name__ == "__main__":
    main()
