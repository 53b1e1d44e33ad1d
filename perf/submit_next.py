"""Server time of "submit answer and get next item" at scale.

Builds, in a fresh database, a ValueGround pair-quality project (the heavy form: two images,
four choice questions + free text) with --items items (default 100,000) and --annotators
annotators (default 50), k=3, entirely through the services:

  projects.create_project -> projects.add_member (x annotators) -> importing.import_items
  (JSONL of --items records; the images are --distinct-images PNGs reused across items, so the
  import stores each once) -> assign_all_annotators (called by import_items: k x items rows).

Then measures in-process with django.test.Client (force_login, DB sessions, DEBUG off, CSRF
checks off as the test client does) the Django request handling, for --submissions
submissions per path, spread round-robin over all annotators:

  web:  POST /a/<id>/ (form)  -> submit_annotation + next_assignment_for, 302 to the next item
        GET  /a/<next>/       -> open_assignment + queue_progress + render the form page
  api:  POST /api/assignments/<id>/submit/ (JSON) -> 201 {"next": id}
        GET  /api/assignments/<next>/             -> the next item's payload (for reference)

The two paths are interleaved (web for one submission, then api for one) so machine noise hits
both alike. The first --warmup submissions of each path are not counted.

  perf/run_with_postgres.sh .venv/bin/python perf/submit_next.py          # PostgreSQL
  .venv/bin/python perf/submit_next.py --database-url sqlite               # SQLite
  ... --items 10000 --submissions 500                                      # quicker
  ... --profile post                                                       # cProfile one path
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common


def make_images(folder: Path, n: int) -> list[str]:
    from PIL import Image, ImageDraw

    names = []
    for i in range(n):
        rng = random.Random(i)
        img = Image.new("RGB", (480, 360), tuple(rng.randrange(256) for _ in range(3)))
        draw = ImageDraw.Draw(img)
        for _ in range(12):
            x0, y0 = rng.randrange(480), rng.randrange(360)
            draw.rectangle(
                [x0, y0, x0 + rng.randrange(10, 200), y0 + rng.randrange(10, 150)],
                fill=tuple(rng.randrange(256) for _ in range(3)),
            )
        name = f"img_{i:04d}.png"
        img.save(folder / name)
        names.append(name)
    return names


def build(args) -> dict:
    from django.contrib.auth import get_user_model

    from annotation import importing, projects
    from annotation.models import Assignment, Rater

    User = get_user_model()
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    researcher = User.objects.create(username="researcher", is_staff=True)
    project = projects.create_project(
        name="perf valueground", preset_key="valueground.pair_quality", created_by=researcher, k_per_item=args.k
    )
    # bulk user rows (no password hashing: the benchmark logs in with force_login)
    users = User.objects.bulk_create([User(username=f"annotator{i:03d}", password="!") for i in range(args.annotators)])
    for u in users:
        projects.add_member(project=project, user=u, role="annotator")
    timings["users_members_s"] = time.perf_counter() - t0

    img_dir = Path(args._tmp) / "images"
    img_dir.mkdir(parents=True, exist_ok=True)
    names = make_images(img_dir, args.distinct_images)
    pairs = len(names) // 2
    lines = []
    countries = ["China", "Germany", "India", "Brazil", "Nigeria", "Japan", "Mexico", "Egypt"]
    for i in range(args.items):
        p = i % pairs
        lines.append(
            json.dumps(
                {
                    "id": f"vg-{i:06d}",
                    "question": f"Survey question number {i % 290}: how important is this value in your life?",
                    "option_a": f"It is very important in my life ({i}).",
                    "option_b": f"It is not at all important in my life ({i}).",
                    "image_a": names[2 * p],
                    "image_b": names[2 * p + 1],
                    "question_id": f"Q{i % 290}",
                    "pipeline": "planner+editor+critic",
                    "generator": ("gpt", "gemini")[i % 2],
                    "country": countries[i % len(countries)],
                    "category": ("family", "gender", "trust", "religion")[i % 4],
                }
            )
        )
    data = ("\n".join(lines) + "\n").encode()
    t0 = time.perf_counter()
    report = importing.import_items(project=project, data=data, data_format="jsonl", images=img_dir)
    timings["import_s"] = time.perf_counter() - t0
    if not report.ok:
        raise SystemExit(f"import failed: {report.errors[:5]}")
    t0 = time.perf_counter()
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cur:
            cur.execute("ANALYZE")
    timings["analyze_s"] = time.perf_counter() - t0
    raters = list(Rater.objects.filter(user__in=users).select_related("user").order_by("id"))
    return {
        "project": project,
        "raters": raters,
        "report": report,
        "timings": timings,
        "assignments": Assignment.objects.filter(project=project).count(),
    }


def form_answers(rng: random.Random) -> dict[str, str]:
    return {
        "mode": "submit",
        "duration_ms": str(rng.randrange(3000, 60000)),
        "q1": str(rng.randrange(3)),
        "q2": str(rng.randrange(3)),
        "q3": str(rng.randrange(3)),
        "q4": str(rng.randrange(2)),
        "feedback": "" if rng.random() < 0.8 else "Image B shows a flag; remove it.",
    }


def api_answers(rng: random.Random) -> dict:
    return {
        "answers": {
            "q1": rng.randrange(3),
            "q2": rng.randrange(3),
            "q3": rng.randrange(3),
            "q4": rng.randrange(2),
            "feedback": "" if rng.random() < 0.8 else "Image B shows a flag; remove it.",
        },
        "duration_ms": rng.randrange(3000, 60000),
    }


SHOWN_QUERIES: dict[int, list[str]] = {}


def count_queries(fn) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as ctx:
        fn()
    SHOWN_QUERIES[len(SHOWN_QUERIES)] = [q["sql"][:160] for q in ctx.captured_queries]
    return len(ctx.captured_queries)


def measure(args, built) -> dict:
    from django.test import Client

    from studies import next_item

    project, raters = built["project"], built["raters"]
    rng = random.Random(42)
    # One queue pointer per annotator, shared by both paths: the web POST submits the head and
    # is redirected to the next item, which the web GET opens; the API then submits that item
    # and gets the next id, which the API GET opens; the next web POST submits that one.
    clients, cur = [], []
    for r in raters:
        c = Client()
        c.force_login(r.user)
        clients.append(c)
        cur.append(next_item.next_in_queue(r, project).id)

    n_r = len(raters)
    # open each web-path first item as an annotator would (not timed)
    for i, c in enumerate(clients):
        assert c.get(f"/a/{cur[i]}/").status_code == 200

    samples = {
        k: []
        for k in (
            "web_post",
            "web_get",
            "web_pair",
            "api_submit",
            "api_get",
            "api_pair",
            "cpu_web_pair",
            "cpu_api_pair",
        )
    }
    cpu = time.thread_time
    queries: dict[str, int] = {}
    profiler = cProfile.Profile() if args.profile else None
    total = args.submissions + args.warmup
    perf = time.perf_counter
    for i in range(total):
        ri = i % n_r
        c = clients[ri]
        counted = i >= args.warmup
        # ---- web: POST the form, follow the redirect to the next item
        aid = cur[ri]
        form = form_answers(rng)
        if args.profile == "post" and counted:
            profiler.enable()
        c0 = cpu()
        t0 = perf()
        r = c.post(f"/a/{aid}/", form)
        t1 = perf()
        if args.profile == "post" and counted:
            profiler.disable()
        if r.status_code != 302:
            raise SystemExit(f"web POST /a/{aid}/ -> {r.status_code}: {r.content[:500]!r}")
        loc = r["Location"]
        if args.profile == "get" and counted:
            profiler.enable()
        t2 = perf()
        g = c.get(loc)
        t3 = perf()
        c1 = cpu()
        if args.profile == "get" and counted:
            profiler.disable()
        if g.status_code != 200:
            raise SystemExit(f"web GET {loc} -> {g.status_code}")
        # ---- api: submit the item the web GET just opened; the answer names the next id
        aid = int(loc.rstrip("/").rsplit("/", 1)[1])
        body = json.dumps(api_answers(rng))
        if args.profile == "api" and counted:
            profiler.enable()
        c2 = cpu()
        t4 = perf()
        a = c.post(f"/api/assignments/{aid}/submit/", body, content_type="application/json")
        t5 = perf()
        if args.profile == "api" and counted:
            profiler.disable()
        if a.status_code != 201:
            raise SystemExit(f"api submit {aid} -> {a.status_code}: {a.content[:500]!r}")
        nxt = a.json()["next"]
        t6 = perf()
        d = c.get(f"/api/assignments/{nxt}/")
        t7 = perf()
        c3 = cpu()
        if d.status_code != 200:
            raise SystemExit(f"api GET {nxt} -> {d.status_code}")
        cur[ri] = nxt
        if counted:
            samples["web_post"].append(t1 - t0)
            samples["web_get"].append(t3 - t2)
            samples["web_pair"].append((t1 - t0) + (t3 - t2))
            samples["api_submit"].append(t5 - t4)
            samples["api_get"].append(t7 - t6)
            samples["api_pair"].append((t5 - t4) + (t7 - t6))
            samples["cpu_web_pair"].append(c1 - c0)
            samples["cpu_api_pair"].append(c3 - c2)
    # query counts for one more request of each kind (outside the timed loop)
    ri = 0
    c = clients[ri]
    aid = cur[ri]
    holder = {}
    queries["web_post"] = count_queries(lambda: holder.setdefault("r", c.post(f"/a/{aid}/", form_answers(rng))))
    loc = holder["r"]["Location"]
    queries["web_get"] = count_queries(lambda: c.get(loc))
    aid = int(loc.rstrip("/").rsplit("/", 1)[1])
    queries["api_submit"] = count_queries(
        lambda: holder.__setitem__(
            "a",
            c.post(f"/api/assignments/{aid}/submit/", json.dumps(api_answers(rng)), content_type="application/json"),
        )
    )
    nxt = holder["a"].json()["next"]
    queries["api_get"] = count_queries(lambda: c.get(f"/api/assignments/{nxt}/"))
    out = {"samples": samples, "queries": queries}
    if profiler is not None:
        s = io.StringIO()
        pstats.Stats(profiler, stream=s).sort_stats(args.profile_sort).print_stats(45)
        out["profile"] = s.getvalue()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common.add_db_args(parser)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("-k", type=int, default=3, help="annotators per item")
    parser.add_argument("--submissions", type=int, default=2000, help="counted submissions per path")
    parser.add_argument("--warmup", type=int, default=100, help="uncounted submissions per path first")
    parser.add_argument("--distinct-images", type=int, default=40, help="distinct PNGs reused across items")
    parser.add_argument("--profile", choices=["post", "get", "api"], help="cProfile one request kind")
    parser.add_argument("--profile-sort", default="cumulative", help="pstats sort key (cumulative, tottime)")
    parser.add_argument("--show-queries", action="store_true", help="print the SQL of one request of each kind")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    args = parser.parse_args()

    info = _common.setup_django(args.database_url, keep=args.keep)
    args._tmp = info["tmp"]
    mach = _common.machine()
    print(f"[submit_next] {mach}")
    print(
        f"[submit_next] database: {info['backend']} {info['server_version']} "
        f"(durable={os.environ.get('HV_PERF_PG_DURABLE', 'n/a')}); migrate {info['migrate_s']} s"
    )
    t0 = time.perf_counter()
    built = build(args)
    rep = built["report"]
    print(
        f"[submit_next] setup {time.perf_counter() - t0:.1f} s: {rep.items_created} items, "
        f"{built['assignments']} assignments, {len(built['raters'])} annotators, k={args.k}; "
        f"import_items {built['timings']['import_s']:.1f} s "
        f"({rep.items_created / built['timings']['import_s']:.0f} items/s incl. {rep.assignments_created} assignments)"
    )
    print(f"[submit_next] load average before measuring: {os.getloadavg()}")
    t0 = time.perf_counter()
    res = measure(args, built)
    wall = time.perf_counter() - t0
    labels = {
        "web_post": "web POST /a/<id>/ (submit + next, 302)",
        "web_get": "web GET /a/<next>/ (render form)",
        "web_pair": "web pair (POST + GET)",
        "api_submit": "api POST .../submit/ (-> next id)",
        "api_get": "api GET /api/assignments/<next>/",
        "api_pair": "api pair (submit + GET)",
        "cpu_web_pair": "  python CPU of the web pair",
        "cpu_api_pair": "  python CPU of the api pair",
    }
    print(
        f"[submit_next] {args.submissions} counted submissions per path (+{args.warmup} warm-up), "
        f"round-robin over {len(built['raters'])} annotators, {wall:.1f} s wall"
    )
    figures = {}
    for key, label in labels.items():
        st = _common.summary_ms(res["samples"][key])
        figures[key] = st
        print(_common.format_row(label, st))
    print(f"[submit_next] SQL queries per request: {res['queries']}")
    if args.show_queries:
        for i, qs in SHOWN_QUERIES.items():
            print(f"  request {i}:")
            for q in qs:
                print(f"    {q}")
    print(f"[submit_next] load average at end: {os.getloadavg()}")
    goal = figures["web_pair"]["p95"] < 30 and figures["api_submit"]["p95"] < 30
    print(
        f"[submit_next] goal p95 < 30 ms: web pair p95 {figures['web_pair']['p95']:.2f} ms, "
        f"api submit p95 {figures['api_submit']['p95']:.2f} ms -> {'MET' if goal else 'NOT MET'}"
    )
    if "profile" in res:
        print(res["profile"])
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "machine": mach,
                    "database": {k: v for k, v in info.items() if k != "tmp"},
                    "items": rep.items_created,
                    "assignments": built["assignments"],
                    "annotators": len(built["raters"]),
                    "k": args.k,
                    "setup": built["timings"],
                    "figures_ms": figures,
                    "queries": res["queries"],
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
