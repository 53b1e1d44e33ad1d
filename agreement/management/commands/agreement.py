"""``python manage.py agreement INPUT``: thin CLI over :func:`hvstats.agreement_report`.

Besides the agreement coefficients, every judge of every field (and stratum) gets the
alt-test (``alt_test``: Calderon, Reichart and Dror, ACL 2025) and, for numeric or binary
fields, the PPI++ estimate of the field's mean (``ppi``: Angelopoulos et al., Science 2023;
PPI++, 2023).  ``--metric`` limits them like any metric (``--metric alt_test``, ``--metric ppi``).

``--active``: the items carry a ``pi`` column (the probability each was sampled with for human
labelling; unlabelled items included with an empty human value or the judge's row only); the
output gets an ``"active"`` key with the active estimate and interval of every field's mean per
judge (and stratum with ``--by``): :func:`hvstats.active_table.active_table` (Zrnic and Candès,
"Active Statistical Inference", ICML 2024).
"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from hvstats import agreement_report
from hvstats.active_table import active_table
from hvstats.alt_test import DEFAULT_EPSILON, EPSILON_GUIDANCE, EPSILON_RANGE, valid_epsilon
from hvstats.data import LEVELS, RatingTableError
from hvstats.io import read_ratings
from hvstats.report import VERDICTS


class Command(BaseCommand):
    help = (
        "Inter-rater agreement report of a long-format CSV/JSONL file "
        "(columns item, rater, value, optional field, rater_kind, strata columns)."
    )

    def add_arguments(self, parser):
        parser.add_argument("input", help="CSV or JSONL file of ratings")
        parser.add_argument("--field", action="append", dest="fields", help="field(s) to analyse (default: all)")
        parser.add_argument(
            "--metric", action="append", dest="metrics", help="metric(s) to compute (default: all applicable)"
        )
        parser.add_argument(
            "--level", choices=LEVELS, default=None, help="measurement level (default: inferred per field)"
        )
        parser.add_argument("--by", action="append", default=[], help="stratum column(s)")
        parser.add_argument(
            "--judge", action="append", dest="judges", help="rater id(s) to treat as judges (default: rater_kind=model)"
        )
        parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples (0 = no CIs)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--format", choices=("json", "table"), default="json")
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

    def handle(self, *args, **o):
        if o["bootstrap"] < 0:
            raise CommandError("--bootstrap must be >= 0")
        if not valid_epsilon(o["epsilon"]):
            raise CommandError(f"--epsilon must be in {EPSILON_RANGE}")
        if o["half_width"] is not None and o["half_width"] <= 0:
            raise CommandError("--half-width must be positive")
        metrics = o["metrics"]
        verdicts = [v for v in VERDICTS if not metrics or v in metrics]
        try:
            df = read_ratings(o["input"])
            missing = [c for c in o["by"] if c not in df.columns]
            if missing:
                raise CommandError(f"missing stratum column(s): {', '.join(missing)}")
            rep = agreement_report(
                df,
                fields=o["fields"],
                metrics=o["metrics"],
                level=o["level"],
                by=o["by"],
                judges=o["judges"],
                bootstrap=o["bootstrap"],
                seed=o["seed"],
                verdicts=verdicts,
                epsilon=o["epsilon"],
                half_width=o["half_width"],
                joint_alt_test=o["joint_alt_test"],
            )
            if o["active"]:
                rep["active"] = active_table(df, fields=o["fields"], level=o["level"], by=o["by"], judges=o["judges"])
        except (RatingTableError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        if o["format"] == "json":
            self.stdout.write(json.dumps(rep, indent=2))
        else:
            self.stdout.write(format_table(rep))


def _fmt(d) -> str:
    if not isinstance(d, dict):
        return ""
    if d.get("value") is None:
        return d.get("reason") or "undefined"
    s = f"{d['value']:.3f}"
    if d.get("ci"):
        s += f" [{d['ci'][0]:.3f}, {d['ci'][1]:.3f}]"
    if d.get("p_value") is not None:
        s += f" p={d['p_value']:.3g}"
    return s + f" n={d.get('n_items')}"


def format_table(rep: dict) -> str:
    lines = []
    for f, fo in rep["fields"].items():
        lines.append(f"== field {f} (level {fo['level']}, {fo['n_items']} items) ==")
        blocks = [("all", fo)] + [(f"{c}={g}", go) for c, gs in fo.get("strata", {}).items() for g, go in gs.items()]
        for name, b in blocks:
            if "humans_vs_humans" not in b:
                lines.append(f"-- {name}: {b.get('reason')}")
                continue
            lines.append(f"-- {name}: humans {', '.join(b['humans'])}")
            h = b["humans_vs_humans"]
            for k, v in h.items():
                if isinstance(v, dict) and "metric" in v:
                    lines.append(f"   {k:<24} {_fmt(v)}")
            for k, v in h.get("leave_one_rater_out", {}).items():
                lines.append(f"   leave_one_out_{k:<10} {_fmt(v)}")
            for j, jd in b["judges_vs_humans"].items():
                for grp in ("vs_human_mean", "vs_human_majority"):
                    for k, v in jd.get(grp, {}).items():
                        lines.append(f"   judge {j} {grp} {k:<12} {_fmt(v)}")
                for k, v in jd.get("rank_among_humans", {}).items():
                    if v.get("rank") is not None:
                        lines.append(
                            f"   judge {j} rank ({k}) {v['rank']}/{v['of']} inside_spread={v['inside_spread']}"
                        )
                if "alt_test" in jd:
                    lines.extend(_alt_test_lines(j, jd["alt_test"]))
                if "ppi" in jd:
                    lines.extend(_ppi_lines(j, jd["ppi"]))
        af = rep.get("active", {}).get("fields", {}).get(f)
        if af:
            lines.extend(_active_lines(af))
    for j, jr in rep.get("alt_test_joint", {}).items():
        lines.append(f"== alt-test joint FDR, judge {j}: passed in {jr['passed_in']} of {jr['of']} ==")
        for env, a in jr["environments"].items():
            lines.extend(_alt_test_lines(j, a, env))
    return "\n".join(lines) + "\n"


def _alt_test_lines(j: str, a: dict, env: str = "") -> list[str]:
    head = f"   judge {j} alt_test{' ' + env if env else ''}"
    if a.get("winning_rate") is None:
        return [f"{head} {a.get('reason')}"]
    out = [
        f"{head} {'PASSED' if a['passed'] else 'FAILED'} winning_rate={a['winning_rate']:.3f} "
        f"advantage_probability={a['advantage_probability']:.3f} epsilon={a['epsilon']} scoring={a['scoring']} "
        f"items={a['n_items']} dropped={a['n_items_dropped']}"
    ]
    for h, d in a["per_human"].items():
        p = "n/a" if d["p_value"] is None else f"{d['p_value']:.3g}"
        out.append(f"     human {h}: items={d['items']} p={p} rejected={d['rejected']}")
    for h, n in a["skipped_humans"].items():
        out.append(f"     human {h}: skipped ({n} items < 30)")
    return out


def _ppi_lines(j: str, p: dict) -> list[str]:
    def ci(c) -> str:
        return "undefined" if c is None else f"[{c[0]:.3f}, {c[1]:.3f}]"

    if p.get("estimate") is None:
        s = f"   judge {j} ppi {p.get('reason')}"
        if p.get("classical_estimate") is not None:
            s += f"; human-only {p['classical_estimate']:.3f} {ci(p['classical_ci'])}"
        return [s]
    out = [
        f"   judge {j} ppi mean {p['estimate']:.3f} {ci(p['ci'])} (human-only {p['classical_estimate']:.3f} "
        f"{ci(p['classical_ci'])}) lambda={p['lambda']:.3f} n_labeled={p['n_labeled']} n_unlabeled={p['n_unlabeled']}"
    ]
    b = p.get("budget")
    if b:
        need = b.get("reason") or f"{b['ppi_items']} items ({b['ppi_human_ratings']} human ratings)"
        out.append(
            f"     budget for half-width {b['half_width']}: PPI {need}; human-only {b['classical_items']} items "
            f"({b['classical_human_ratings']} human ratings)"
        )
    return out


def _active_lines(af: dict) -> list[str]:
    if "judges" not in af:
        return [f"-- active: {af.get('reason')}"]
    out = []
    blocks = [("all", af["judges"])] + [
        (f"{c}={g}", js) for c, gs in af.get("strata", {}).items() for g, js in gs.items()
    ]
    for name, js in blocks:
        for j, a in js.items():
            if a.get("estimate") is None:
                out.append(f"   active {name} judge {j}: {a.get('reason')}")
                continue
            s = (
                f"   active {name} judge {j}: mean {a['estimate']:.3f} [{a['ci'][0]:.3f}, {a['ci'][1]:.3f}] "
                f"lambda={a['lambda']:.3f} labels={a['n_labeled']}/{a['n_items']}"
            )
            u = a.get("uniform") or {}
            if u.get("ppi_effective_labels") is not None:
                s += f"; uniform PPI++ needs {u['ppi_effective_labels']}, humans alone {u['human_only_effective_labels']:.0f}"
            out.append(s)
    return out
