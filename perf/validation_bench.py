"""Benchmark of a protocol's validation tables (issue 10's figure).

Builds, in memory, the long ratings table the platform reads from a ValueGround project
(``agreement.selectors.ratings_frame`` shape: one row per item x rater x field) with --items
pairs (default 100,000), --humans annotators (default 5, half China, half Germany) and --judges
model judges (default 2), every rater on every item, Q1-Q3 on 0-2, Q4 0/1 and the derived
Total, two generation backbones, and the assignment order (the annotators of an item assigned
in a random order, which decides the rater slots). Then times the preset's whole validation report (Table 4,
Table 4 by annotator group, Table 4 by backbone; every cell with its --bootstrap percentile CI,
default 1,000 resamples) through ``benchmarks.valueground.tables.validation_report``, the function the
page, the API and the ``validation_report`` command call, plus rendering the tables as
Markdown, LaTeX and CSV. The database read is not included (see ``perf/agreement_bench.py`` and
docs/benchmarks.md for the ratings frame).

    python perf/validation_bench.py [--items 100000] [--humans 5] [--judges 2] [--bootstrap 1000]
                                    [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.valueground import tables as valueground_tables
from hvstats.tables import to_csv, to_latex, to_markdown
from hvstats.validation import RaterInfo, ValidationInput


def make_input(n_items: int, n_humans: int, n_judges: int, bootstrap: int, seed: int = 0) -> ValidationInput:
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=n_items)
    raters = [f"annotator{i}" for i in range(n_humans)] + [f"judge{j}" for j in range(n_judges)]
    kinds = ["human"] * n_humans + ["model"] * n_judges
    scores: dict[str, np.ndarray] = {}
    for f, hi in (("q1", 2), ("q2", 2), ("q3", 2)):
        noise = rng.normal(scale=0.8, size=(n_items, len(raters)))
        scores[f] = np.clip(np.round(1.2 + 0.9 * quality[:, None] + noise), 0, hi)
    scores["q4"] = (quality[:, None] + rng.normal(scale=0.8, size=(n_items, len(raters))) > -0.6).astype(float)
    scores["total"] = (scores["q1"] / 2 + scores["q2"] / 2 + scores["q3"] / 2 + scores["q4"]) / 4  # Eq. 8
    fields = list(scores)
    n_r, n_f = len(raters), len(fields)
    item = np.repeat(np.arange(n_items), n_r * n_f)
    rater_idx = np.tile(np.repeat(np.arange(n_r), n_f), n_items)
    field_idx = np.tile(np.arange(n_f), n_items * n_r)
    values = np.stack([scores[f] for f in fields], axis=2)[item, rater_idx, field_idx]
    names = np.array(raters, dtype=object)
    frame = pd.DataFrame(
        {
            "item": item.astype(str),
            "item_pk": item + 1,
            "external_id": np.char.add("vg-", item.astype(str)),
            "rater": names[rater_idx],
            "rater_kind": np.array(kinds, dtype=object)[rater_idx],
            "field": np.array(fields, dtype=object)[field_idx],
            "value": values,
            "element": None,
            "generator": np.where(item % 2 == 0, "gpt", "gemini"),
            "country": "",
        }
    )
    infos = {
        r: RaterInfo(r, k, {"nationality": ("China", "Germany")[i % 2]} if k == "human" else {}, "openai_chat")
        for i, (r, k) in enumerate(zip(raters, kinds, strict=True))
    }
    levels = {"q1": "ordinal", "q2": "ordinal", "q3": "ordinal", "q4": "nominal", "total": "interval"}
    # as a project stores it: each annotator's assignment id per item, the annotators of an
    # item assigned in a random order (the slot a rating filled follows from it)
    ranks = np.argsort(rng.random((n_items, n_humans)), axis=1)
    assignment_order = {
        (int(i) + 1, raters[h]): int(i) * n_humans + int(ranks[i, h]) for i in range(n_items) for h in range(n_humans)
    }
    return ValidationInput(
        frame=frame, raters=infos, levels=levels, bootstrap=bootstrap, seed=seed, assignment_order=assignment_order
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--humans", type=int, default=5)
    ap.add_argument("--judges", type=int, default=2)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    t0 = time.perf_counter()
    inp = make_input(args.items, args.humans, args.judges, args.bootstrap)
    build_s = time.perf_counter() - t0
    print(
        f"[validation_bench] {args.items:,} items x {args.humans} annotators + {args.judges} judges, "
        f"{len(inp.frame):,} ratings, {args.bootstrap} resamples (frame built in {build_s:.1f} s); "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}"
    )
    walls = []
    for _ in range(args.repeat):
        fresh = replace(inp, memo={})  # nothing read before: each repeat pays for its reads
        t0 = time.perf_counter()
        tables = valueground_tables.validation_report(fresh)
        t1 = time.perf_counter()
        text = [to_markdown(tables), to_latex(tables), to_csv(tables)]
        t2 = time.perf_counter()
        walls.append((t1 - t0, t2 - t1))
        cells = sum(len(r.cells) for t in tables for r in t.rows)
        print(
            f"  tables {len(tables)}, cells {cells}: compute {t1 - t0:.2f} s, "
            f"render markdown+latex+csv {t2 - t1:.3f} s ({sum(len(s) for s in text):,} chars)"
        )
    best = min(c + r for c, r in walls)
    print(f"[validation_bench] whole validation report, best of {args.repeat}: {best:.2f} s (goal: under 5 s)")


if __name__ == "__main__":
    main()
