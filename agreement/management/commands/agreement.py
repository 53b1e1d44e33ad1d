"""``python manage.py agreement INPUT``: thin CLI over :func:`agreement.stats.agreement_report`."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from agreement.stats import agreement_report
from agreement.stats.data import LEVELS, RatingTableError
from agreement.stats.io import read_ratings


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

    def handle(self, *args, **o):
        if o["bootstrap"] < 0:
            raise CommandError("--bootstrap must be >= 0")
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
            )
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
    return "\n".join(lines) + "\n"
