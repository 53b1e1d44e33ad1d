"""The embedded stack (SQLite, WAL) at 10^6 (issue 37, H3 and M5): an export of --annotations
annotations and an import of as many, each run by a worker process while annotators submit
through the API from another process (the web's), as `make run` has them. Reported per job: its
outcome and wall time, and the annotators' submits during it (count, failures, p50/p95/max).

Setup (not timed): a ValueGround project with --annotations annotations inserted with
``executemany`` (perf/export_bench.py's ``populate``) for the export; a Cultural Question
Benchmark Turing project with --annotations / 5 items inserted the same way and a long CSV of
5 source raters rating every item (one line per annotation) for the import; and a small
Turing project whose 4 annotators have queues of their own.

  .venv/bin/python perf/sqlite_stack_bench.py                        # 10^6 (minutes)
  .venv/bin/python perf/sqlite_stack_bench.py --annotations 50000    # quick
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common

SOURCES = 5
ANNOTATORS = 4


def child(args: argparse.Namespace) -> None:
    """The worker: run one export or import job (by id) and print its outcome."""
    import django

    django.setup()
    kind, pk = args.child.split(":")
    t0 = time.perf_counter()
    if kind == "export":
        from curation.exports import run_export_job
        from curation.models import Export

        job = run_export_job(export=Export.objects.select_related("project").get(pk=int(pk)))
        detail = job.message
    else:
        from annotation import annotation_import
        from annotation.models import AnnotationImport

        job = annotation_import.run_annotation_import_job(job=AnnotationImport.objects.get(pk=int(pk)))
        detail = {k: job.report.get(k) for k in ("annotations_created", "errors")}
    print(json.dumps({"status": job.status, "seconds": time.perf_counter() - t0, "detail": detail}))


def insert_turing_items(project, n: int) -> None:
    from django.db import connection, transaction
    from django.utils import timezone

    now = timezone.now()
    with transaction.atomic(), connection.cursor() as cur:
        rows = [
            (
                project.id,
                f"t{i}",
                json.dumps({"human_utterance": f"human says {i}", "model_utterance": f"model says {i}"}),
                now,
            )
            for i in range(n)
        ]
        cur.executemany(
            "INSERT INTO annotation_item (project_id, external_id, version, parent_id, data, country, region,"
            " generator, category, dimension, meta, created_at) VALUES (%s,%s,1,NULL,%s,'','','','','','{}',%s)",
            rows,
        )


def annotate_while(proc: subprocess.Popen, queues: dict, users: list, *, warm_up: bool = False) -> list[dict]:
    """Annotators submit (one thread each, a Django test client: the whole request) until the
    worker process ends; each submit's status and seconds."""
    from django.db import connections
    from django.test import Client

    samples: list[dict] = []

    def annotator(user) -> None:
        client = Client()
        client.force_login(user)
        try:
            for aid in queues[user.id]:
                if proc.poll() is not None and not warm_up:
                    break
                t0 = time.perf_counter()
                try:
                    status = client.post(
                        f"/api/assignments/{aid}/submit/",
                        {"answers": {"human_written": "left"}},
                        content_type="application/json",
                    ).status_code
                except Exception as exc:  # "database is locked": a 500 in a served request
                    status = repr(exc)[:80]
                samples.append({"status": status, "seconds": time.perf_counter() - t0})
                if warm_up:
                    break
                time.sleep(0.5)  # an annotator's pace, compressed
        finally:
            connections.close_all()

    threads = [threading.Thread(target=annotator, args=(u,)) for u in users]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return samples


def report(label: str, proc: subprocess.Popen, samples: list[dict]) -> None:
    out, err = proc.communicate()
    lines = out.strip().splitlines()
    if proc.returncode or not lines:
        print(out, err[-3000:])
        raise SystemExit(f"{label}: the worker failed")
    job = json.loads(lines[-1])
    failed = [s for s in samples if s["status"] != 201]
    print(f"{label}: {job['status']} in {job['seconds']:.1f} s ({job['detail']})")
    print("  " + _common.format_row("annotator submits meanwhile", _common.summary_ms([s["seconds"] for s in samples])))
    print(f"  failed submits: {len(failed)} of {len(samples)} {failed[:3]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common.add_db_args(parser)
    parser.add_argument("--annotations", type=int, default=1_000_000)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    info = _common.setup_django("sqlite", keep=args.keep)
    from django.contrib.auth import get_user_model
    from export_bench import populate

    from annotation import importing, projects
    from annotation.models import AnnotationImport, Assignment, Rater
    from curation.models import Export

    print(f"[sqlite_stack_bench] SQLite {info['server_version']}; machine {_common.machine()}")
    User = get_user_model()
    owner = User.objects.create(username="owner")
    users = [User.objects.create(username=f"ann{i}") for i in range(ANNOTATORS)]
    # explicit ids from 1 (export_bench.populate): before any other item or assignment
    n = args.annotations
    t0 = time.perf_counter()
    vg = projects.create_project(name="vg", preset_key="valueground.pair_quality", created_by=owner, k_per_item=4)
    raters = [
        Rater.objects.create(kind="human", user=User.objects.create(username=f"vg{i}"), name=f"vg{i}") for i in range(4)
    ]
    populate(vg, raters, 1, n // 4, random.Random(1))
    print(f"  (inserted {n:,} annotations for the export in {time.perf_counter() - t0:.0f} s)")

    live = projects.create_project(name="live", preset_key="cqbench.turing", created_by=owner, k_per_item=ANNOTATORS)
    for u in users:
        projects.add_member(project=live, user=u, role="annotator")
    items = "\n".join(
        json.dumps({"id": f"l{i}", "human_utterance": f"h {i}", "model_utterance": f"m {i}"}) for i in range(3000)
    )
    assert importing.import_items(project=live, data=items + "\n", data_format="jsonl").ok
    # one queue per annotator across both jobs: an assignment is submitted once
    queues = {
        u.id: iter(
            Assignment.objects.filter(project=live, rater__user=u)
            .order_by("position", "id")
            .values_list("id", flat=True)
        )
        for u in users
    }
    # warm up (URLs, views, the lean path's statements): one submit each, not counted
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    annotate_while(done, queues, users, warm_up=True)
    export = Export.objects.create(project=vg, content="annotations", format="jsonl", scope="all")
    proc = subprocess.Popen(
        [sys.executable, __file__, "--child", f"export:{export.id}"],
        cwd=_common.ROOT,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    report(f"export of {n:,} annotations (JSONL)", proc, annotate_while(proc, queues, users))

    t0 = time.perf_counter()
    turing = projects.create_project(name="imp", preset_key="cqbench.turing", created_by=owner, k_per_item=1)
    insert_turing_items(turing, n // SOURCES)
    data = Path(info["tmp"]) / "ratings.csv"
    with data.open("w") as fh:
        fh.write("item,rater,field,value\n")
        for r in range(SOURCES):
            fh.writelines(f"t{i},src-{r},human_written,left\n" for i in range(n // SOURCES))
    job = AnnotationImport.objects.create(project=turing, data_file=str(data), data_format="csv", item_key="id")
    print(f"  (items and a {data.stat().st_size / 1e6:.0f} MB file for the import in {time.perf_counter() - t0:.0f} s)")
    proc = subprocess.Popen(
        [sys.executable, __file__, "--child", f"import:{job.id}"],
        cwd=_common.ROOT,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    report(f"import of {n:,} annotations (long CSV)", proc, annotate_while(proc, queues, users))


if __name__ == "__main__":
    main()
