"""Issue 33: how long ``hv-stats --help`` takes, and what its imports cost.

Goal: the import time of ``hv-stats --help`` under 0.5 s. The command imports no numpy, scipy or
pandas until a report is asked for (``hvstats/cli.py``, the lazy ``hvstats/__init__.py``); this
script prints, each the median of --repeat fresh processes:

- ``python -X importtime -c "import hvstats.cli"``: the cumulative import time of
  ``hvstats.cli`` as Python reports it (its own imports only, the interpreter's start excluded);
- the wall time of ``python -m hvstats.cli --help`` (interpreter start, imports, the help
  printed) and of ``python -c pass`` (the interpreter start alone), so their difference is what
  the command adds;
- for comparison, the cumulative import time of ``hvstats.report`` (numpy, scipy, pandas: what
  every report pays, and what ``--help`` would pay if the command imported it eagerly);
- with ``--hv-stats PATH``, the wall time of an installed ``hv-stats --help`` console script too.

No database, no Django. Run from the repository root:

    python perf/cli_import_time.py [--repeat 15] [--hv-stats /tmp/venv/bin/hv-stats]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def import_us(module: str) -> int:
    """Cumulative import time of ``module`` in microseconds (``-X importtime``, fresh process)."""
    err = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stderr
    line = next(x for x in err.splitlines() if re.search(rf"\|\s*{re.escape(module)}$", x))
    return int(line.split("|")[1])


def wall_s(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, capture_output=True, check=True, cwd=ROOT)
    return time.perf_counter() - t


def median(f, n: int) -> float:
    return statistics.median(f() for _ in range(n))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--hv-stats", default=None, help="an installed hv-stats console script to time as well")
    a = ap.parse_args()
    n = a.repeat
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; median of {n}"
    )
    cli = median(lambda: import_us("hvstats.cli"), n) / 1e6
    report = median(lambda: import_us("hvstats.report"), n) / 1e6
    helped = median(lambda: wall_s([sys.executable, "-m", "hvstats.cli", "--help"]), n)
    bare = median(lambda: wall_s([sys.executable, "-c", "pass"]), n)
    print(f"import hvstats.cli (-X importtime, cumulative)   {cli:.3f} s")
    print(f"python -m hvstats.cli --help (wall)              {helped:.3f} s")
    print(f"python -c pass (wall, the interpreter alone)     {bare:.3f} s")
    print(f"  --help adds                                    {helped - bare:.3f} s")
    print(f"import hvstats.report (numpy, scipy, pandas)     {report:.3f} s  (for comparison)")
    if a.hv_stats:
        installed = median(lambda: wall_s([a.hv_stats, "--help"]), n)
        print(f"{a.hv_stats} --help (wall)  {installed:.3f} s")


if __name__ == "__main__":
    main()
