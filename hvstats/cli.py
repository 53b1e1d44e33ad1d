"""``hv-stats``: the agreement report of a ratings file from the command line, without the
platform. ``manage.py agreement`` is a thin wrapper over the same two functions
(:func:`add_agreement_arguments`, :func:`agreement_output`), so both print the same report.

Usage::

    hv-stats agreement FILE [--field F] [--by COLUMN] [--judge RATER] [--active]
                            [--format json|table|markdown|latex] ...
    hv-stats FILE ...          # the same: agreement is the default command
    hv-stats rank FILE [--judge NAME ...] [--alpha 0.05] [--format table|json]

The file is long (``item, rater, value[, field, rater_kind, strata]``) or wide (one column per
field; :mod:`.io`). Besides the agreement coefficients, every judge of every field (and
stratum) gets the alt-test (``alt_test``: Calderon, Reichart and Dror, ACL 2025) and, for
numeric or binary fields, the PPI++ estimate of the field's mean (``ppi``: Angelopoulos et al.,
Science 2023; PPI++, 2023). ``--metric`` limits them like any metric (``--metric alt_test``,
``--metric ppi``).

``--active``: the items carry a ``pi`` column (the probability each was sampled with for human
labelling; unlabelled items included with an empty human value or the judge's row only); the
output gets an ``"active"`` key with the active estimate and interval of every field's mean per
judge (and stratum with ``--by``): :func:`.active_table.active_table` (Zrnic and Candès,
"Active Statistical Inference", ICML 2024).

``rank``: rank-sets of systems from pairwise comparisons by people and a judge
(:mod:`.ranking`; Chatzi et al., NeurIPS 2024); ``manage.py rank`` wraps it.

This module imports no numpy, scipy or pandas at import time: ``hv-stats --help`` answers
before they load (0.5 s and more); the statistics are imported when a report is made.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .options import DEFAULT_EPSILON, EPSILON_GUIDANCE, EPSILON_RANGE, LEVELS, VERDICTS, valid_epsilon

FORMATS = ("json", "table", "markdown", "latex")
DESCRIPTION = (
    "Inter-rater agreement report of a ratings file: long CSV/JSONL (columns item, rater, value, "
    "optional field, rater_kind, strata columns) or wide (item, rater, one column per field)."
)


class CliError(ValueError):
    """A bad argument or input file; the message is for the person at the terminal."""


def add_agreement_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``agreement`` command's arguments (``hv-stats agreement`` and ``manage.py agreement``)."""
    parser.add_argument("input", help="CSV or JSONL file of ratings (long or wide)")
    parser.add_argument("--field", action="append", dest="fields", help="field(s) to analyse (default: all)")
    parser.add_argument(
        "--metric", action="append", dest="metrics", help="metric(s) to compute (default: all applicable)"
    )
    parser.add_argument("--level", choices=LEVELS, default=None, help="measurement level (default: inferred per field)")
    parser.add_argument("--by", action="append", default=[], help="stratum column(s)")
    parser.add_argument(
        "--judge", action="append", dest="judges", help="rater id(s) to treat as judges (default: rater_kind=model)"
    )
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples (0 = no CIs)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="json",
        help="json (the whole report), table (plain text), markdown or latex (booktabs tables)",
    )
    guidance = ", ".join(f"{v} {k}" for k, v in EPSILON_GUIDANCE.items())
    parser.add_argument(
        "--epsilon",
        type=float,
        default=DEFAULT_EPSILON,
        help=f"alt-test cost-benefit margin (default {DEFAULT_EPSILON}; the paper's guidance: {guidance} annotators)",
    )
    parser.add_argument(
        "--half-width",
        type=float,
        default=None,
        help="PPI budget advice: human ratings needed for a 95%% CI of this half-width",
    )
    parser.add_argument(
        "--joint-alt-test",
        action="store_true",
        help="also one alt-test per judge across all strata (or fields) with one FDR correction",
    )
    parser.add_argument(
        "--active",
        action="store_true",
        help="active-inference estimate per field (needs a 'pi' column: each item's sampling probability)",
    )


def agreement_report_of(o: Mapping[str, Any]) -> dict[str, Any]:
    """The report the options ``o`` (:func:`add_agreement_arguments`'s, by dest) ask for, as a
    JSON-ready dict. Raises :class:`CliError` for bad options and unreadable or invalid files."""
    if o["bootstrap"] < 0:
        raise CliError("--bootstrap must be >= 0")
    if not valid_epsilon(o["epsilon"]):
        raise CliError(f"--epsilon must be in {EPSILON_RANGE}")
    if o["half_width"] is not None and o["half_width"] <= 0:
        raise CliError("--half-width must be positive")
    # the statistics (numpy, scipy, pandas) load here, once a report is asked for
    from .active_table import active_table
    from .data import RatingTableError
    from .io import read_ratings
    from .notes import active_notes
    from .report import agreement_report

    metrics = o["metrics"]
    verdicts = [v for v in VERDICTS if not metrics or v in metrics]
    by = list(o["by"] or ())
    try:
        df = read_ratings(o["input"], by=by)
        missing = [c for c in by if c not in df.columns]
        if missing:
            raise CliError(f"missing stratum column(s): {', '.join(missing)}")
        rep = agreement_report(
            df,
            fields=o["fields"],
            metrics=metrics,
            level=o["level"],
            by=by,
            judges=o["judges"],
            bootstrap=o["bootstrap"],
            seed=o["seed"],
            verdicts=verdicts,
            epsilon=o["epsilon"],
            half_width=o["half_width"],
            joint_alt_test=o["joint_alt_test"],
        )
        if o["active"]:
            rep["active"] = active_table(df, fields=o["fields"], level=o["level"], by=by, judges=o["judges"])
            rep["notes"] += active_notes(rep["active"])
    except RatingTableError as exc:
        raise CliError(str(exc)) from exc
    except ValueError as exc:
        if isinstance(exc, CliError):
            raise
        raise CliError(str(exc)) from exc
    return rep


def agreement_output(o: Mapping[str, Any]) -> str:
    """The report as the text ``--format`` asks for, ending with a newline."""
    rep = agreement_report_of(o)
    fmt = o.get("format") or "json"
    if fmt == "json":
        return json.dumps(rep, indent=2) + "\n"
    from .render import format_table, report_tables
    from .tables import render

    if fmt == "table":
        return format_table(rep)
    if fmt in ("markdown", "latex"):
        return render(report_tables(rep), fmt)
    raise CliError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")


# ------------------------------------------------------------------------------ rank
RANK_DESCRIPTION = (
    "Rank-sets of systems from pairwise comparisons: CSV or JSONL with columns item, system_a, "
    "system_b, rater, winner (a, b or tie); human-only, judge-only and prediction-powered "
    "(Chatzi et al., NeurIPS 2024)."
)
RANK_FORMATS = ("table", "json")


def add_rank_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``rank`` command's arguments (``hv-stats rank`` and ``manage.py rank``)."""
    parser.add_argument("input", help="CSV or JSONL file of comparisons (item, system_a, system_b, rater, winner)")
    parser.add_argument(
        "--judge",
        action="append",
        dest="judges",
        help="rater(s) that are the judge; every other rater is a person (default: rater_kind=model)",
    )
    parser.add_argument("--alpha", type=float, default=0.05, help="1 - coverage of the rank-sets (default 0.05)")
    parser.add_argument("--format", choices=RANK_FORMATS, default="table", help="table (plain text) or json")


def rank_report_of(o: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The ``rank`` report and its notes (:func:`hvstats.ranking.rank_report`). Raises
    :class:`CliError` for bad options and unreadable or invalid files."""
    alpha = o["alpha"]
    if not (alpha == alpha and 0.0 < alpha < 1.0):  # alpha == alpha: not nan
        raise CliError("--alpha must be in (0, 1)")
    from .ranking import RankingInputError, rank_report, read_comparisons

    try:
        return rank_report(read_comparisons(o["input"]), judges=o["judges"], alpha=alpha)
    except RankingInputError as exc:
        raise CliError(str(exc)) from exc
    except ValueError as exc:
        raise CliError(str(exc)) from exc


def rank_text(report: Mapping[str, Any], notes: Sequence[str], o: Mapping[str, Any]) -> str:
    """The report as ``--format`` asks: JSON holds exactly ``systems`` and ``methods`` (the notes
    go to standard error), the table ends with the notes."""
    if (o.get("format") or "table") == "json":
        return json.dumps(report, indent=2) + "\n"
    from .ranking import format_rank_table

    return format_rank_table(report, notes, o["alpha"])


def rank_output(o: Mapping[str, Any]) -> str:
    """``hv-stats rank``: the text; with ``--format json`` the notes are written to stderr."""
    report, notes = rank_report_of(o)
    if (o.get("format") or "table") == "json":
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
    return rank_text(report, notes, o)


# ------------------------------------------------------------------------------ the program
#: subcommand -> (help, add its arguments, make its output)
COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[Mapping[str, Any]], str]]] = {
    "agreement": (DESCRIPTION, add_agreement_arguments, agreement_output),
    "rank": (RANK_DESCRIPTION, add_rank_arguments, rank_output),
}
DEFAULT_COMMAND = "agreement"


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="hv-stats",
        description="Statistics of human validation for AI benchmark data (the hvstats library). "
        f"`hv-stats FILE ...` is `hv-stats {DEFAULT_COMMAND} FILE ...`.",
    )
    parser.add_argument("--version", action="version", version=f"hv-stats {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (text, add_arguments, _run) in COMMANDS.items():
        p = sub.add_parser(name, help=text.split(":")[0], description=text)
        add_arguments(p)
    return parser


def _with_default_command(argv: Sequence[str]) -> list[str]:
    """``hv-stats FILE ...`` -> ``hv-stats agreement FILE ...``: a first argument that is no
    command and no option is the agreement command's input file."""
    args = list(argv)
    if args and args[0] not in COMMANDS and not args[0].startswith("-"):
        return [DEFAULT_COMMAND, *args]
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """The ``hv-stats`` console script: prints the output, 0 on success; 2 with the message on
    stderr for a bad argument or file (argparse's own status for usage errors)."""
    parser = build_parser()
    args = parser.parse_args(_with_default_command(sys.argv[1:] if argv is None else argv))
    if args.command is None:
        parser.print_help()
        return 2
    try:
        text = COMMANDS[args.command][2](vars(args))
    except CliError as exc:
        print(f"hv-stats {args.command}: error: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":  # python -m hvstats.cli
    sys.exit(main())
