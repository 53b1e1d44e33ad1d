"""The report's options as plain Python, with no numpy, scipy or pandas: what ``hv-stats
--help`` and the argument checks need. The statistics modules import them from here
(:mod:`.alt_test`, :mod:`.data`, :mod:`.report` re-export them under their old names), so the
command line and the statistics cannot disagree, and the help stays fast (docs/benchmarks.md)."""

from __future__ import annotations

#: measurement levels of a field (Krippendorff's: nominal, ordinal, interval, ratio)
LEVELS = ("nominal", "ordinal", "interval", "ratio")
#: the verdicts a report can add per judge: the alternative annotator test and the PPI++ mean
VERDICTS = ("alt_test", "ppi")
#: the alt-test's cost-benefit margin by annotator kind (Calderon, Reichart and Dror, ACL 2025)
EPSILON_GUIDANCE = {"expert": 0.2, "skilled": 0.15, "crowd": 0.1}
DEFAULT_EPSILON = 0.2
#: the margins accepted everywhere (the commands, the API, the report settings): 0 (no
#: cost-benefit advantage granted to the judge) up to, not including, 1 (with E[d] <= 1 an
#: epsilon of 1 or more makes every judge pass)
EPSILON_RANGE = "[0, 1)"


def valid_epsilon(epsilon: float) -> bool:
    """Whether ``epsilon`` is in :data:`EPSILON_RANGE`."""
    return 0 <= epsilon < 1
