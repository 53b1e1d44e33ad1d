"""Export speed and peak memory: all annotations of a ValueGround project in long format, as
JSONL and as Parquet, through ``curation.exports.run_export_job`` (the code the worker runs).

Setup (fast, no ORM per row): one ValueGround project, --raters human raters, items with k =
raters; every (item, rater) gets a submitted assignment and an annotation with random Q1-Q4
answers (derived Total / accepted computed by the rubric). Rows are inserted with explicit ids
through ``cursor.executemany`` in batches of 20,000. Sizes grow cumulatively (default 250,000
then 1,000,000 annotations) so the same database is measured twice: flat memory means the
peak does not grow with the size.

Each export runs in a fresh child process (same database, same MEDIA_ROOT): ``seconds`` is the
wall time of the job, ``peak MiB`` the child's ru_maxrss (includes Django + pyarrow, which the
``baseline`` row shows for a child that only imports and sets up). Long rows = 6 per annotation
(q1-q4, total, accepted).

  .venv/bin/python perf/export_bench.py                                # SQLite
  perf/run_with_postgres.sh .venv/bin/python perf/export_bench.py      # PostgreSQL
  ... --sizes 20000,100000                                             # quick
  ... --sizes 100000 --formats jsonl,csv,parquet                       # CSV too

JSONL and CSV go through ``curation.exports.annotations.annotation_text`` (lines concatenated from
pre-serialised pieces), Parquet through ``annotation_rows`` (tuples, one row group per batch).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common

BATCH = 20_000


def child(args: argparse.Namespace) -> None:
    import resource

    import django

    django.setup()
    if args.child == "baseline":
        import pyarrow.parquet  # noqa: F401

        import curation.exports  # noqa: F401

        print(json.dumps({"peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
        return
    from curation.exports import export_root, run_export_job
    from curation.models import Export

    export = Export.objects.select_related("project__rubric_version").get(pk=int(args.child))
    t0 = time.perf_counter()
    export = run_export_job(export=export)
    seconds = time.perf_counter() - t0
    assert export.status == "done", export.message
    f = export.files[0]
    print(
        json.dumps(
            {
                "seconds": seconds,
                "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "rows": f["rows"],
                "bytes": f["size"],
                "path": str(export_root(export) / f["name"]),
            }
        )
    )


def populate(project, raters, start_item: int, n_items: int, rng: random.Random) -> None:
    """Items start_item..start_item+n_items-1 (explicit ids), each with one submitted assignment
    and annotation per rater."""
    from django.db import connection, transaction
    from django.utils import timezone

    rubric = project.rubric_version.parsed()
    now = timezone.now()
    derived_cache: dict[tuple, str] = {}
    k = len(raters)
    with transaction.atomic(), connection.cursor() as cur:
        items, assigns, anns = [], [], []

        def flush() -> None:
            cur.executemany(
                "INSERT INTO annotation_item (id, project_id, external_id, version, parent_id, data, country, region,"
                " generator, category, dimension, meta, created_at) VALUES (%s,%s,%s,1,NULL,%s,%s,'',%s,%s,'',%s,%s)",
                items,
            )
            cur.executemany(
                "INSERT INTO annotation_assignment (id, project_id, item_id, rater_id, status, purpose, position,"
                " presentation, lease_expires_at, skip_reason, created_at, opened_at, submitted_at)"
                " VALUES (%s,%s,%s,%s,'submitted','regular',%s,'{}',NULL,'',%s,%s,%s)",
                assigns,
            )
            cur.executemany(
                "INSERT INTO annotation_annotation (id, assignment_id, item_id, rater_id, rubric_version_id, answers,"
                " derived, duration_ms, created_at, updated_at, revision, locale) VALUES (%s,%s,%s,%s,%s,%s,%s,NULL,%s,%s,1,'')",
                anns,
            )
            items.clear(), assigns.clear(), anns.clear()

        for item_id in range(start_item, start_item + n_items):
            data = {
                "question": f"How important is family? ({item_id})",
                "option_a": "Very important",
                "option_b": "Not at all important",
                "image_a": f"{item_id:064x}",
                "image_b": f"{item_id + 7:064x}",
            }
            items.append(
                (
                    item_id,
                    project.id,
                    f"vg-{item_id:07d}",
                    json.dumps(data),
                    ("China", "Germany")[item_id % 2],
                    ("gpt", "gemini")[item_id % 2],
                    ("family", "trust", "religion", "gender")[item_id % 4],
                    "{}",
                    now,
                )
            )
            for j, rater in enumerate(raters):
                aid = (item_id - 1) * k + j + 1
                answers = (rng.randint(0, 2), rng.randint(0, 2), rng.randint(0, 2), rng.randint(0, 1))
                derived = derived_cache.get(answers)
                if derived is None:
                    derived = derived_cache[answers] = json.dumps(
                        rubric.derive(dict(zip(("q1", "q2", "q3", "q4"), answers, strict=True)))
                    )
                ans = {"q1": answers[0], "q2": answers[1], "q3": answers[2], "q4": answers[3], "feedback": None}
                assigns.append((aid, project.id, item_id, rater.id, item_id, now, now, now))
                anns.append(
                    (aid, aid, item_id, rater.id, project.rubric_version_id, json.dumps(ans), derived, now, now)
                )
            if len(anns) >= BATCH:
                flush()
        if anns or items:
            flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common.add_db_args(parser)
    parser.add_argument("--sizes", default="250000,1000000", help="annotation counts, ascending (cumulative)")
    parser.add_argument("--raters", type=int, default=4)
    parser.add_argument("--formats", default="jsonl,parquet")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)

    info = _common.setup_django(args.database_url, keep=args.keep)
    from django.contrib.auth import get_user_model
    from django.db import connection

    from annotation import projects
    from annotation.models import Rater
    from curation.models import Export

    print(f"[export_bench] {info['backend']} {info['server_version']}; machine {_common.machine()}")
    User = get_user_model()
    owner = User.objects.create(username="owner")
    project = projects.create_project(
        name="bench", preset_key="valueground.pair_quality", created_by=owner, k_per_item=args.raters
    )
    raters = [
        Rater.objects.create(kind="human", user=User.objects.create(username=f"ann{i}"), name=f"ann{i}")
        for i in range(args.raters)
    ]
    rng = random.Random(1)
    sizes = [int(s) for s in args.sizes.split(",")]
    have_items = 0
    baseline = json.loads(_common.run_child([__file__, "--child", "baseline"]).stdout)
    print(f"baseline child (django + pyarrow imported): peak {baseline['peak_mib']:.0f} MiB")
    print(
        f"{'annotations':>12} {'format':>8} {'long rows':>10} {'seconds':>8} {'rows/s':>9} {'MiB file':>9} "
        f"{'peak MiB':>9}"
    )
    for size in sizes:
        want_items = size // args.raters
        t0 = time.perf_counter()
        populate(project, raters, have_items + 1, want_items - have_items, rng)
        have_items = want_items
        if connection.vendor == "postgresql":
            with connection.cursor() as cur:
                cur.execute("ANALYZE")
        setup_s = time.perf_counter() - t0
        print(f"  (inserted up to {size:,} annotations in {setup_s:.1f}s)")
        for fmt in args.formats.split(","):
            export = Export.objects.create(project=project, content="annotations", format=fmt, scope="all")
            res = _common.run_child([__file__, "--child", str(export.id)])
            if res.returncode:
                print(res.stdout, res.stderr)
                raise SystemExit(res.returncode)
            r = json.loads(res.stdout.strip().splitlines()[-1])
            print(
                f"{size:>12,} {fmt:>8} {r['rows']:>10,} {r['seconds']:>8.1f} {r['rows'] / r['seconds']:>9,.0f} "
                f"{r['bytes'] / 2**20:>9.1f} {r['peak_mib']:>9.0f}"
            )
            os.unlink(r["path"])


if __name__ == "__main__":
    main()
