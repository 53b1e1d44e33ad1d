"""Import speed of human annotations made in another tool (issue 26): a long CSV of 100,000
annotations (rater-item pairs) through ``annotation.annotation_import.start_annotation_import``,
the same job the page, the API and ``manage.py import_annotations`` run (read, match, map,
coerce, the rubric validator per annotation, COPY of assignments and annotations, the job's
report and progress).

The project is a BlendVis template-check project (``blendvis.template``: a choice question given
by its label, "Good" / "Bad (...)", and a free-text comment on one annotation in five), with
--items items (default 20,000) imported first; --raters (default 5) source annotators each rate
every item, with a nationality attribute and a timestamp: items x raters annotations,
about 1.2 lines per annotation. A second run of the same file is timed too (idempotence: it
adds nothing).

  perf/run_with_postgres.sh .venv/bin/python perf/import_annotations_bench.py
  .venv/bin/python perf/import_annotations_bench.py --database-url sqlite --items 2000
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common


def main() -> None:
    ap = argparse.ArgumentParser()
    _common.add_db_args(ap)
    ap.add_argument("--items", type=int, default=20_000)
    ap.add_argument("--raters", type=int, default=5)
    a = ap.parse_args()
    info = _common.setup_django(a.database_url, keep=a.keep)
    print(f"database: {info.get('server_version')}; machine: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")

    from django.contrib.auth import get_user_model

    from annotation import annotation_import, importing, projects
    from annotation.models import Annotation

    user = get_user_model().objects.create_user(username="perf", password="x")
    project = projects.create_project(name="perf", preset_key="blendvis.template", created_by=user, k_per_item=3)
    tmp = Path(info["tmp"])
    items = tmp / "items.jsonl"
    with items.open("w") as fh:
        for i in range(a.items):
            fh.write(
                f'{{"id": "t{i}", "original_template": "A photo of [X] {i}", "rephrased_template": "[X] in {i}"}}\n'
            )
    t = time.perf_counter()
    report = importing.import_items(project=project, data=items, data_format="jsonl")
    assert report.ok, report.errors[:5]
    print(f"{a.items} items imported in {time.perf_counter() - t:.1f} s (setup, not timed below)")

    verdict_q = project.rubric_version.parsed().question("verdict")
    bad_label = next(o.label for o in verdict_q.options if o.value == "Bad")  # given by its label
    data = tmp / "annotations.csv"
    nations = ["China", "Germany", "India", "Brazil", "Kenya"]
    lines = 0
    with data.open("w") as fh:
        fh.write("item,rater,field,value,nationality,timestamp\n")
        for r in range(a.raters):
            for i in range(a.items):
                verdict = "Good" if (i * 7 + r) % 5 else '"' + bad_label.replace('"', '""') + '"'
                stamp = f"2024-05-{1 + r:02d}T10:{i % 60:02d}:00Z"
                fh.write(f"t{i},worker-{r},verdict,{verdict},{nations[r % 5]},{stamp}\n")
                lines += 1
                if (i + r) % 5 == 0:
                    fh.write(f'"t{i}",worker-{r},comment,"the placeholder, moved",{nations[r % 5]},{stamp}\n')
                    lines += 1
    n = a.items * a.raters
    size = data.stat().st_size / 1e6
    print(f"file: {n} annotations, {lines} lines, {size:.1f} MB (long CSV)")

    phases: dict[str, float] = {}

    def timed(name, fn):
        def wrapper(*args, **kwargs):
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                phases[name] = phases.get(name, 0.0) + time.perf_counter() - t

        return wrapper

    # phases, timed by wrapping the service's collaborators (app code unchanged)
    annotation_import.check_annotations = timed("read+check", annotation_import.check_annotations)
    annotation_import.write_plan = timed("write (COPY + commit)", annotation_import.write_plan)
    annotation_import.insert_rows = timed("  of which COPY", annotation_import.insert_rows)
    for label in ("first import", "same file again"):
        phases.clear()
        t0, c0 = time.perf_counter(), time.process_time()
        job = annotation_import.start_annotation_import(
            project=project,
            user=user,
            path=data,
            original_name=data.name,
            data_format="csv",
            item_key="id",
            mapping={},
            inline=True,
        )
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        rep = job.report
        assert job.status == "done", rep.get("errors", [])[:5]
        print(
            f"{label}: {wall:.2f} s wall, {cpu:.2f} s CPU; {rep.get('annotations_created', 0)} annotations "
            f"written, duplicate_of={rep.get('duplicate_of')}; {n / wall:,.0f} annotations/s"
        )
        print("   " + "; ".join(f"{k} {v:.2f} s" for k, v in phases.items()))
    stored = Annotation.objects.filter(item__project=project).count()
    assert stored == n, stored
    print(f"stored annotations: {stored}; max RSS {_common.max_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
