"""Krippendorff's own worked example: K. Krippendorff, "Computing Krippendorff's
Alpha-Reliability" (2011), section E ("a more complex example"): 4 observers A-D, 12 units,
values 1-5, missing data.  Unit 12 has a single value (not pairable); value 5 occurs only in
units that observer A did not rate, so the pair (A, B) does not use every category."""

from pathlib import Path

import numpy as np

nan = np.nan
OBSERVERS = ["A", "B", "C", "D"]
#: items x raters (the paper prints observers x units)
KRIPP = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
).T
#: the published values (three decimals)
PUBLISHED = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}
LEVELS = list(PUBLISHED)


def write_csv(path: Path) -> Path:
    """The example as a long-format CSV (item, rater, value; all raters human)."""
    lines = ["item,rater,value,rater_kind"]
    for u in range(KRIPP.shape[0]):
        for r, name in enumerate(OBSERVERS):
            if not np.isnan(KRIPP[u, r]):
                lines.append(f"u{u + 1},{name},{int(KRIPP[u, r])},human")
    path.write_text("\n".join(lines) + "\n")
    return path
