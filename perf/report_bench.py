"""Issue 35 (fast reports): server time of the agreement page, the printable report and the
report API for every demo study, first request and warm, and cProfile of one study's report.

Seeds the demo (``manage.py seed_demo``) into a fresh database, logs in as ``researcher`` and,
per demo study (the ``Demo study: ...`` projects), times through ``django.test.Client`` (in
process: the server's time, no network): the first GET of the agreement page (default
parameters: 1,000 resamples), then --repeat warm GETs of the agreement page, the printable report
and the report API (JSON), keeping the median. The same script run on an older checkout
(``--code-dir``: e.g. ``git archive main | tar -x -C /tmp/before``) gives the "before" figures,
where every request computes the report.

    python perf/report_bench.py [--repeat 3] [--profile "CQ-Bench story"] [--code-dir DIR]
    perf/run_with_postgres.sh python perf/report_bench.py
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3, help="warm requests per page (the median is printed)")
    ap.add_argument("--profile", default="", help="cProfile the report of the demo study whose name contains this")
    ap.add_argument("--code-dir", default="", help="run another checkout's code (before/after)")
    ap.add_argument("--database-url", default=os.environ.get("DATABASE_URL", ""))
    a = ap.parse_args()
    root = Path(a.code_dir).resolve() if a.code_dir else Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _common import machine, setup_django

    sys.path.insert(0, str(root))  # before _common's own checkout: the code measured is root's
    os.chdir(root)

    info = setup_django(a.database_url)
    from django.core.management import call_command
    from django.test import Client
    from django.urls import reverse

    from annotation.models import Project

    t0 = time.perf_counter()
    out = io.StringIO()
    call_command("seed_demo", stdout=out, stderr=out)
    print(
        f"code: {root}; database: {info['backend']} {info['server_version']}; seed_demo {time.perf_counter() - t0:.1f} s"
    )
    m = machine()
    print(f"machine: {m['nproc']} CPUs ({m['cpu']}), load average {os.getloadavg()[0]:.2f} at start")
    client = Client()
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.get(username="researcher"))

    def timed(url: str, **q) -> tuple[float, int]:
        t = time.perf_counter()
        r = client.get(url, q)
        return time.perf_counter() - t, r.status_code

    def timed_cpu(url: str) -> tuple[float, float, int]:
        # CPU time of this process too: on a shared machine the wall time is inflated by the load
        t, c = time.perf_counter(), time.process_time()
        r = client.get(url)
        return time.perf_counter() - t, time.process_time() - c, r.status_code

    print(
        f"{'demo study':<58} {'first':>7} {'(cpu)':>7} {'page':>7} {'print':>7} {'api':>7}"
        f"  (s; warm = median of {a.repeat})"
    )
    for p in Project.objects.filter(name__startswith="Demo study").order_by("id"):
        page = reverse("agreement_report", args=[p.id])
        first, first_cpu, code = timed_cpu(page)
        assert code == 200, (p.name, code)
        warm = {}
        for name, url, q in (
            ("page", page, {}),
            ("print", reverse("printable_report", args=[p.id]), {}),
            ("api", reverse("api_agreement_report", args=[p.id]), {"format": "json"}),
        ):
            warm[name] = statistics.median(timed(url, **q)[0] for _ in range(a.repeat))
        print(
            f"{p.name[:58]:<58} {first:7.3f} {first_cpu:7.3f} {warm['page']:7.3f} {warm['print']:7.3f} {warm['api']:7.3f}",
            flush=True,
        )
    if a.profile:
        p = Project.objects.filter(name__startswith="Demo study", name__icontains=a.profile).first()
        from agreement import services

        prof = cProfile.Profile()
        prof.enable()
        services.compute_report(project=p, params=services.ReportParams())
        prof.disable()
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(25)
        print(f"cProfile of the report of {p.name} (cumulative):\n{s.getvalue()}")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
