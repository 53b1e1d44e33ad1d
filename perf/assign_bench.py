"""Assignment at scale on PostgreSQL: stratified sampling, pooled plans, next-assignment latency
and submit throughput against gunicorn.

Builds, in a fresh database (rows written with annotation.bulk.insert_rows, i.e. COPY):
  --items items (default 1,000,000) of a CQ-Bench Turing-pair project, strata country (10) x
  generator (3); --annotators annotators (default 1,000), members of the project.

Measures:
  1. draw_sample: a proportional stratified sample of --sample items (default 100,000) over
     country x generator; then create_plan (pooled, k) writing the pool's slots. Seconds each.
  2. a pooled plan over ALL items (k x items slots), then next-assignment latency: for
     --claims requests, round-robin over the annotators, studies.next_item.next_assignment (their open
     item, else a claim with SELECT ... FOR UPDATE SKIP LOCKED), followed by a submit; p50/p95.
  3. submit throughput: gunicorn (--workers sync workers) on loopback, --clients concurrent
     HTTP clients (default 32), each looping GET /api/projects/<id>/next/ then POST
     /api/assignments/<id>/submit/ for --seconds seconds (or --max-requests in all).

  perf/run_with_postgres.sh .venv/bin/python perf/assign_bench.py
  perf/run_with_postgres.sh .venv/bin/python perf/assign_bench.py --items 100000 --annotators 200  # quick
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common

COUNTRIES = ["China", "Germany", "India", "Brazil", "Nigeria", "Japan", "Mexico", "Egypt", "Iran", "Spain"]
GENERATORS = ["gpt", "gemini", "flux"]


def build(args) -> dict:
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.utils import timezone

    from annotation import projects
    from annotation.bulk import insert_rows, reserve_ids
    from annotation.models import Item, Membership, Rater

    User = get_user_model()
    t: dict[str, float] = {}
    owner = User.objects.create(username="researcher", is_staff=True, is_superuser=True)
    project = projects.create_project(
        name="perf assign", preset_key="cqbench.turing", created_by=owner, k_per_item=args.k
    )
    project.options = {"assignment": "plans"}
    project.save(update_fields=["options"])
    t0 = time.perf_counter()
    users = User.objects.bulk_create(
        [User(username=f"ann{i:04d}", password="!") for i in range(args.annotators)], batch_size=1000
    )
    now = timezone.now()
    with transaction.atomic():
        insert_rows(
            Rater,
            ["kind", "user", "name", "attributes", "backend", "model_id", "prompt_hash", "parameters", "created_at"],
            (
                (
                    "human",
                    u.id,
                    u.username,
                    json.dumps({"nationality": COUNTRIES[i % len(COUNTRIES)]}),
                    "",
                    "",
                    "",
                    "{}",
                    now,
                )
                for i, u in enumerate(users)
            ),
        )
        insert_rows(
            Membership,
            ["project", "user", "role", "paused_reason"],
            ((project.id, u.id, "annotator", "") for u in users),
        )
    t["annotators_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    with transaction.atomic():
        ids = reserve_ids(Item, args.items)
        insert_rows(
            Item,
            [
                "id",
                "project",
                "external_id",
                "version",
                "data",
                "meta",
                "country",
                "region",
                "generator",
                "category",
                "dimension",
                "created_at",
            ],
            (
                (
                    item_id,
                    project.id,
                    f"t{n}",
                    1,
                    json.dumps({"human_utterance": f"human {n}", "model_utterance": f"model {n}"}),
                    "{}",
                    COUNTRIES[n % 10],
                    "",
                    GENERATORS[(n // 10) % 3],
                    "",
                    "",
                    now,
                )
                for n, item_id in enumerate(ids)
            ),
        )
    t["items_s"] = time.perf_counter() - t0
    with connection.cursor() as cur:
        cur.execute("ANALYZE")
    raters = list(Rater.objects.filter(user__in=users).select_related("user").order_by("id"))
    return {"project": project, "raters": raters, "timings": t}


def sample_and_assign(args, built) -> dict:
    from django.db import connection

    from studies import plans, sampling

    project = built["project"]
    out = {}
    t0 = time.perf_counter()
    sample = sampling.draw_sample(
        project=project,
        name="100k",
        strata_keys=["country", "generator"],
        allocation="proportional",
        total_size=args.sample,
        seed=1,
    )
    out["draw_sample_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    plan = plans.create_plan(sample=sample, mode="pooled", k=args.k, take_over=True)
    out["create_pooled_plan_s"] = time.perf_counter() - t0
    out["sample_items"] = sample.report["total_drawn"]
    out["slots"] = plan.report["slots"]
    plans.close_plan(plan=plan)
    t0 = time.perf_counter()
    full = sampling.draw_sample(
        project=project,
        name="all",
        strata_keys=["country", "generator"],
        allocation="proportional",
        total_size=args.items,
        seed=2,
    )
    out["draw_full_sample_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    big = plans.create_plan(sample=full, mode="pooled", k=args.k)
    out["create_full_pool_s"] = time.perf_counter() - t0
    out["full_slots"] = big.report["slots"]
    with connection.cursor() as cur:
        cur.execute("ANALYZE")
    return out


def measure_next(args, built) -> dict:
    from annotate import annotating
    from studies import next_item

    project, raters = built["project"], built["raters"]
    samples, submits = [], []
    perf = time.perf_counter
    total = args.claims + args.warmup
    for i in range(total):
        r = raters[i % len(raters)]
        t0 = perf()
        a = next_item.next_assignment(rater=r, project=project)
        t1 = perf()
        if a is None:
            raise SystemExit(f"no assignment for {r.name}")
        annotating.submit_annotation(assignment_id=a.id, rater=r, answers={"human_written": "left"}, loaded=None)
        t2 = perf()
        if i >= args.warmup:
            samples.append(t1 - t0)
            submits.append(t2 - t1)
    return {"next": _common.summary_ms(samples), "submit": _common.summary_ms(submits)}


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _session_cookie(user) -> str:
    from django.contrib.sessions.backends.db import SessionStore

    s = SessionStore()
    s["_auth_user_id"] = str(user.pk)
    s["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
    s["_auth_user_hash"] = user.get_session_auth_hash()
    s.create()
    return s.session_key


def measure_http(args, built) -> dict:
    from django.db import connections

    project, raters = built["project"], built["raters"]
    port = _free_port()
    connections.close_all()
    env = dict(os.environ, DEBUG="0", DB_CONN_MAX_AGE="600")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi:application",
            "-b",
            f"127.0.0.1:{port}",
            "-w",
            str(args.workers),
            "--keep-alive",
            "30",
            "--log-level",
            "warning",
        ],
        cwd=_common.ROOT,
        env=env,
        start_new_session=True,
    )
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        cookies = []
        for r in raters[: args.clients]:
            cookies.append(_session_cookie(r.user))
        connections.close_all()
        latencies: list[float] = []
        errors: list[str] = []
        count = [0]
        lock = threading.Lock()
        deadline = [0.0]
        barrier = threading.Barrier(
            args.clients, action=lambda: deadline.__setitem__(0, time.perf_counter() + args.seconds)
        )

        def client(idx):
            csrf = secrets.token_hex(16)
            headers = {
                "Cookie": f"sessionid={cookies[idx]}; csrftoken={csrf}",
                "X-CSRFToken": csrf,
                "Content-Type": "application/json",
                "Host": "127.0.0.1",
            }
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            # warm-up (not timed): the workers load Django on their first requests
            for _ in range(2):
                conn.request("GET", f"/api/projects/{project.id}/next/", headers=headers)
                conn.getresponse().read()
            barrier.wait()
            while time.perf_counter() < deadline[0]:
                with lock:
                    if count[0] >= args.max_requests:
                        return
                    count[0] += 1
                t0 = time.perf_counter()
                conn.request("GET", f"/api/projects/{project.id}/next/", headers=headers)
                resp = conn.getresponse()
                body = resp.read()
                if resp.status != 200:
                    errors.append(f"next {resp.status} {body[:200]!r}")
                    return
                aid = json.loads(body)["id"]
                conn.request(
                    "POST",
                    f"/api/assignments/{aid}/submit/",
                    body=json.dumps({"answers": {"human_written": "right"}}),
                    headers=headers,
                )
                resp = conn.getresponse()
                body = resp.read()
                if resp.status != 201:
                    errors.append(f"submit {resp.status} {body[:200]!r}")
                    return
                with lock:
                    latencies.append(time.perf_counter() - t0)

        threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        wall = time.perf_counter() - (deadline[0] - args.seconds)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    return {
        "submits": len(latencies),
        "wall_s": wall,
        "per_s": len(latencies) / wall if wall else 0,
        "pair_ms": _common.summary_ms(latencies),
        "errors": errors[:5],
    }


def check_invariants(built) -> dict:
    from django.db.models import Count

    from annotation.models import Annotation
    from studies.models import PoolSlot

    project = built["project"]
    worst = (
        Annotation.objects.filter(assignment__project=project)
        .values("item_id")
        .annotate(c=Count("id"))
        .order_by("-c")
        .values_list("c", flat=True)
        .first()
    )
    submitted = PoolSlot.objects.filter(plan__project=project, state="submitted").count()
    annotations = Annotation.objects.filter(assignment__project=project).count()
    return {"max_submissions_per_item": worst, "submitted_slots": submitted, "annotations": annotations}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common.add_db_args(parser)
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--annotators", type=int, default=1000)
    parser.add_argument("-k", type=int, default=3)
    parser.add_argument("--sample", type=int, default=100_000)
    parser.add_argument("--claims", type=int, default=3000, help="timed next-assignment requests")
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--workers", type=int, default=5, help="gunicorn sync workers")
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--max-requests", type=int, default=20_000)
    parser.add_argument("--json")
    args = parser.parse_args()
    info = _common.setup_django(args.database_url, keep=args.keep)
    if info["backend"] != "postgresql":
        print("[assign_bench] warning: not PostgreSQL; the figures are for PostgreSQL", file=sys.stderr)
    print(f"[assign_bench] {_common.machine()}")
    print(f"[assign_bench] database: {info['backend']} {info['server_version']}")
    t0 = time.perf_counter()
    built = build(args)
    print(
        f"[assign_bench] built {args.items} items, {args.annotators} annotators in {time.perf_counter() - t0:.1f} s "
        f"{ {k: round(v, 1) for k, v in built['timings'].items()} }",
        flush=True,
    )
    sa = sample_and_assign(args, built)
    print(
        f"[assign_bench] stratified sample of {sa['sample_items']} from {args.items}: draw {sa['draw_sample_s']:.2f} s, "
        f"pooled plan (k={args.k}, {sa['slots']} slots) {sa['create_pooled_plan_s']:.2f} s, "
        f"total {sa['draw_sample_s'] + sa['create_pooled_plan_s']:.2f} s",
        flush=True,
    )
    print(
        f"[assign_bench] full pool: sample {sa['draw_full_sample_s']:.1f} s, {sa['full_slots']} slots "
        f"{sa['create_full_pool_s']:.1f} s",
        flush=True,
    )
    nx = measure_next(args, built)
    print(_common.format_row("next_assignment (claim/queue)", nx["next"]))
    print(_common.format_row("submit_annotation (service)", nx["submit"]), flush=True)
    goal = nx["next"]["p95"] < 20
    print(f"[assign_bench] goal next p95 < 20 ms: {nx['next']['p95']:.2f} ms -> {'MET' if goal else 'NOT MET'}")
    http_res = measure_http(args, built)
    print(
        f"[assign_bench] gunicorn {args.workers} workers, {args.clients} clients: {http_res['submits']} "
        f"next+submit pairs in {http_res['wall_s']:.1f} s = {http_res['per_s']:.0f} submits/s; errors {http_res['errors']}"
    )
    print(_common.format_row("http next+submit pair", http_res["pair_ms"]))
    inv = check_invariants(built)
    print(f"[assign_bench] invariants: {inv}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {"sample": sa, "next": nx, "http": http_res, "invariants": inv, "build": built["timings"]},
                indent=2,
                default=str,
            )
        )


if __name__ == "__main__":
    main()
