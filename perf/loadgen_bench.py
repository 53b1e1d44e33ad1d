"""Annotation throughput over HTTP (issue 15): the shared load generator
(``/work/shared/bench/loadgen.py``, i.e. ``../shared/bench/loadgen.py``) against this project's
own server under gunicorn, on PostgreSQL and on the embedded SQLite default.

For each database and each client count:
  1. a fresh ValueGround project (``valueground.pair_quality``, k = 1) with C annotators, each
     with a session (what a logged-in browser holds), and enough items that no queue runs dry,
     built through the services (``projects.create_project``, ``add_member``,
     ``importing.import_items`` with 40 distinct PNGs, as ``../shared/bench/setup_project.py``);
  2. gunicorn serving ``config.wsgi`` on a free loopback port (DEBUG off), warmed up;
  3. the load generator, unmodified: C clients, each its own annotator, loop "GET
     /api/assignments/<id>/ (the item to show), POST .../submit/ (the reply names the next)" for
     --seconds. It prints annotations/s, cycle p50/p95, errors and duplicates; p99 is taken from
     the same cycle times (the generator runs under a small wrapper that keeps them);
  4. ``--path web`` (or ``both``): the same loop through the web form, by a driver written like the
     load generator: POST the form of /a/<id>/ (302 to the next item), GET /a/<next>/ (the page);
  5. checks in the database: every submit the clients counted is stored (nothing lost), no
     assignment answered twice, no item over k, every submitted assignment has its annotation;
  6. the CPU each stored annotation cost the gunicorn processes, PostgreSQL and the whole
     machine (from /proc; the machine's includes the clients and anything else running).

PostgreSQL: a throwaway server on loopback (initdb in a temp folder, as ``scripts/test`` and
``perf/run_with_postgres.sh`` do) with durable defaults (fsync, synchronous_commit on), unless
--database-url names one. SQLite: a fresh file, served like ``make run`` (one process, threads).

  .venv/bin/python perf/loadgen_bench.py                                  # both, 32 clients, 20 s
  .venv/bin/python perf/loadgen_bench.py --db postgres --clients 8,32,256 --seconds 15
  .venv/bin/python perf/loadgen_bench.py --db sqlite --clients 64
  .venv/bin/python perf/loadgen_bench.py --code-dir /tmp/hv_before        # serve another checkout
  .venv/bin/python perf/loadgen_bench.py --pg-server gthread:2x16 --path both

Server models (``--pg-server`` / ``--sqlite-server``): ``sync:N`` (N sync workers, no
keep-alive), ``gthread:NxT`` (N processes x T threads, keep-alive) or ``granian:NxT`` (Granian's
WSGI server, N processes x T blocking threads; not a dependency: ``pip install granian``). Defaults: what
``scripts/run`` starts for SQLite (1 x 4), and 2 x 8 for PostgreSQL (docs/benchmarks.md compares
the models; TARGETS' runs used ``sync:4``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOADGEN = (ROOT / ".." / "shared" / "bench" / "loadgen.py").resolve()
PY = sys.executable

# Runs the shared load generator unmodified; only keeps its cycle times to add p99 (its own
# output has p50 and p95). main()'s globals are the generator's module namespace: pct is
# looked up there at call time, so wrapping it before the run sees the same list it sorts.
LOADGEN_WRAPPER = r"""
import asyncio, json, runpy, sys
path = sys.argv[1]
sys.argv = [path, *sys.argv[2:]]
kept = []
real_run = asyncio.run
def run(coro):
    g = coro.cr_frame.f_globals
    pct = g["pct"]
    def keep(xs, p):
        if p == 50:
            kept.append(list(xs))
        return pct(xs, p)
    g["pct"] = keep
    out = real_run(coro)
    if kept:
        print(json.dumps({"cycle_p99_ms": round(pct(kept[0], 99), 1)}))
    return out
asyncio.run = run
runpy.run_path(path, run_name="__main__")
"""


# ----------------------------------------------------------------------------- servers
def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port: int, proc: subprocess.Popen | None = None, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"nothing listens on 127.0.0.1:{port}")


class Postgres:
    """A throwaway PostgreSQL on loopback with durable defaults (fsync, synchronous_commit)."""

    def __init__(self, durable: bool = True) -> None:
        bins = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: p.parent.parent.name)
        if not bins:
            raise SystemExit("PostgreSQL server binaries (initdb) not found: run scripts/test once as root")
        self.bin = bins[-1].parent
        self.tmp = Path(tempfile.mkdtemp(prefix="hv-loadgen-pg-"))
        self.tmp.chmod(0o755)
        self.data = self.tmp / "data"
        self.port = free_port()
        self.run_as: list[str] = []
        if os.geteuid() == 0:
            self.run_as = ["runuser", "-u", "postgres", "--"]
            shutil.chown(self.tmp, "postgres")
        self.durable = durable

    def start(self) -> str:
        initdb = [str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust"]
        subprocess.run(
            [*self.run_as, *initdb, "-E", "UTF8", "--locale=C", "--no-sync"],
            check=True,
            capture_output=True,
        )
        opts = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.tmp} -c max_connections=300"
        if not self.durable:
            opts += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        pg_ctl = [str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.tmp / "server.log")]
        subprocess.run(
            [*self.run_as, *pg_ctl, "-w", "-t", "60", "-o", opts, "start"],
            check=True,
            capture_output=True,
        )
        return f"postgres://postgres@127.0.0.1:{self.port}/postgres"

    def postmaster_pid(self) -> int:
        return int((self.data / "postmaster.pid").read_text().split()[0])

    def stop(self) -> None:
        subprocess.run(
            [*self.run_as, str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"],
            check=False,
            capture_output=True,
        )
        shutil.rmtree(self.tmp, ignore_errors=True)


def parse_server(spec: str) -> tuple[str, int, int]:
    kind, _, size = spec.partition(":")
    if kind == "sync":
        return kind, int(size or 4), 1
    if kind in ("gthread", "granian"):
        n, _, t = (size or "1x4").partition("x")
        return kind, int(n), int(t or 4)
    raise SystemExit(f"server model {spec!r}: sync:N, gthread:NxT or granian:NxT")


# --profile-server: each worker runs under cProfile (CPU time, its main thread: use sync
# workers) and writes its statistics when it exits.
PROFILE_CONF = """
import cProfile, os, time
_profile = None
def post_fork(server, worker):
    global _profile
    _profile = cProfile.Profile(time.process_time)
    _profile.enable()
def worker_exit(server, worker):
    if _profile is not None:
        _profile.disable()
        _profile.dump_stats(os.path.join({folder!r}, f"worker_{{os.getpid()}}.prof"))
"""


def start_gunicorn(
    code_dir: Path,
    env: dict[str, str],
    spec: str,
    port: int,
    profile_dir: Path | None = None,
    access_log: bool = False,
) -> subprocess.Popen:
    kind, workers, threads = parse_server(spec)
    if kind == "granian":  # Granian (Rust HTTP server, WSGI): N processes x T blocking threads
        if importlib.util.find_spec("granian") is None:
            raise SystemExit("--pg-server/--sqlite-server granian:NxT needs granian: .venv/bin/pip install granian")
        argv = [PY, "-m", "granian", "--interface", "wsgi", "--host", "127.0.0.1", "--port", str(port)]
        argv += ["--workers", str(workers), "--blocking-threads", str(threads), "--backlog", "2048"]
        argv += ["--log-level", "warning", "config.wsgi:application"]
        if access_log:
            argv += ["--access-log"]
        proc = subprocess.Popen(argv, cwd=code_dir, env=env, start_new_session=True)
        wait_port(port, proc)
        return proc
    argv = [PY, "-m", "gunicorn", "config.wsgi:application", "-b", f"127.0.0.1:{port}", "-w", str(workers)]
    argv += ["--log-level", "warning", "--backlog", "2048"]
    if profile_dir is not None:
        conf = profile_dir / "profile_conf.py"
        conf.write_text(PROFILE_CONF.format(folder=str(profile_dir)))
        argv += ["-c", str(conf)]
    if access_log:
        argv += ["--access-logfile", "/dev/null"]  # formatted and written, as make run's is
    if kind == "gthread":
        argv += ["-k", "gthread", "--threads", str(threads), "--keep-alive", "75"]
        argv += ["--worker-connections", "2000"]
    else:
        argv += ["-k", "sync"]
    proc = subprocess.Popen(argv, cwd=code_dir, env=env, start_new_session=True)
    wait_port(port, proc)
    return proc


CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid: int, *, with_children: bool) -> float:
    """CPU seconds of a process (and of its children already waited for), from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = int(fields[11]) + int(fields[12])  # utime, stime
    if with_children:
        ticks += int(fields[13]) + int(fields[14])  # cutime, cstime
    return ticks / CLK_TCK


def tree_cpu(root: int | None) -> float:
    """CPU seconds of a process tree: the root with its reaped children, plus the live children."""
    if not root:
        return 0.0
    total = proc_cpu(root, with_children=True)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == root:
            total += proc_cpu(int(stat.parent.name), with_children=True)
    return total


def machine_busy() -> float:
    """CPU seconds the whole machine spent busy (all users: the other sessions' load shows here)."""
    parts = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = parts[3] + parts[4]
    return (sum(parts[:8]) - idle) / CLK_TCK


def stop(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


# ----------------------------------------------------------------------------- seeding
def make_images(folder: Path) -> None:
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    for i in range(40):
        Image.new("RGB", (480, 360), (i * 6, 100, 200 - i * 4)).save(folder / f"i{i}.png")


def seed(*, clients: int, items: int, images: Path, tag: str) -> dict:
    """A ValueGround project, k = 1, ``clients`` annotators with a session each, ``items``
    items spread over their queues (the default assignment), through the services."""
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.contrib.sessions.backends.db import SessionStore
    from django.db import connection

    from annotation import importing, projects

    User = get_user_model()
    boss = User.objects.create(username=f"boss_{tag}", is_staff=True)
    project = projects.create_project(
        name=f"loadgen {tag}", preset_key="valueground.pair_quality", created_by=boss, k_per_item=1
    )
    users = User.objects.bulk_create([User(username=f"lg_{tag}_{i:03d}", password="!") for i in range(clients)])
    for u in users:
        projects.add_member(project=project, user=u, role="annotator")
    lines = [
        json.dumps(
            {
                "id": f"p{i}",
                "question": f"Survey question {i % 290}: how important is this value in your life?",
                "option_a": "It is very important in my life.",
                "option_b": "It is not at all important in my life.",
                "image_a": f"i{(2 * i) % 40}.png",
                "image_b": f"i{(2 * i + 1) % 40}.png",
                "question_id": f"Q{i % 290}",
                "pipeline": "planner+editor+critic",
                "generator": ("gpt", "gemini")[i % 2],
                "country": ("China", "Germany")[i % 2],
            }
        )
        for i in range(items)
    ]
    t0 = time.perf_counter()
    report = importing.import_items(project=project, data="\n".join(lines) + "\n", data_format="jsonl", images=images)
    if not report.ok:
        raise SystemExit(f"import failed: {report.errors[:3]}")
    import_s = time.perf_counter() - t0
    cookies = []
    for u in users:
        s = SessionStore()
        s[SESSION_KEY] = str(u.pk)
        s[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
        s[HASH_SESSION_KEY] = u.get_session_auth_hash()
        s.create()
        cookies.append({"cookie": s.session_key})
    if connection.vendor == "postgresql":
        # the steady state of a table that autovacuum has seen (statistics, visibility map),
        # rather than autovacuum starting on the fresh rows in the middle of the run
        with connection.cursor() as cur:
            cur.execute("VACUUM ANALYZE")
    return {"project": project.id, "clients": cookies, "import_s": import_s, "items": items}


def invariants(project_id: int, k: int) -> dict:
    """What the database holds after a run: annotations, the most per item and per assignment,
    submitted assignments without an annotation and annotations of unsubmitted assignments."""
    from django.db.models import Count

    from annotation.models import Annotation, Assignment

    anns = Annotation.objects.filter(assignment__project_id=project_id)
    per_item = anns.values("item_id").annotate(c=Count("id")).order_by("-c").values_list("c", flat=True).first()
    submitted = Assignment.objects.filter(project_id=project_id, status=Assignment.Status.SUBMITTED)
    return {
        "annotations": anns.count(),
        "max_per_item": per_item or 0,
        "over_k_items": anns.values("item_id").annotate(c=Count("id")).filter(c__gt=k).count(),
        "submitted_without_annotation": submitted.filter(annotation__isnull=True).count(),
        "annotation_not_submitted": anns.exclude(assignment__status=Assignment.Status.SUBMITTED).count(),
    }


# ----------------------------------------------------------------------------- drivers
def run_loadgen(port: int, clients: int, seconds: float, cfg_path: Path) -> dict:
    out = subprocess.run(
        [PY, "-c", LOADGEN_WRAPPER, str(LOADGEN), "hv", str(port), str(clients), str(seconds), str(cfg_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    res: dict = {"error_lines": []}
    for line in out.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            res.update(json.loads(line))
        elif line:
            res["error_lines"].append(line)
    if "per_s" not in res:
        raise SystemExit(f"load generator failed ({out.returncode}): {out.stdout[-2000:]} {out.stderr[-2000:]}")
    return res


def pct(xs: list[float], p: float) -> float:
    """The load generator's percentile (linear interpolation), in ms."""
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * p / 100
    f = int(k)
    c = min(f + 1, len(xs) - 1)
    return (xs[f] + (xs[c] - xs[f]) * (k - f)) * 1000


async def web_client(i: int, port: int, cfg: dict, deadline: float, st: dict) -> None:
    """One annotator through the web form, like the load generator's API client: the page of the
    next item, then in a loop POST its form (302 to the next item) and GET that page."""
    import httpx

    base = f"http://127.0.0.1:{port}"
    rnd = random.Random(i)
    csrf = "x" * 32
    headers = {
        "Cookie": f"sessionid={cfg['clients'][i]['cookie']}; csrftoken={csrf}",
        "Origin": base,
        "Referer": base + "/",
        "Host": f"127.0.0.1:{port}",
    }
    async with httpx.AsyncClient(
        base_url=base, headers=headers, timeout=120, limits=httpx.Limits(max_connections=1)
    ) as c:
        r = await c.get(f"/projects/{cfg['project']}/next/")
        if r.status_code != 302 or "/a/" not in r.headers.get("location", ""):
            st["errors"].append(f"first next {r.status_code}")
            return
        loc = r.headers["location"]
        r = await c.get(loc)
        if r.status_code != 200:
            st["errors"].append(f"first page {r.status_code}")
            return
        aid = int(loc.rstrip("/").rsplit("/", 1)[1])
        while time.perf_counter() < deadline and aid:
            t0 = time.perf_counter()
            form = {
                "csrfmiddlewaretoken": csrf,
                "mode": "submit",
                "duration_ms": "5000",
                "q1": str(rnd.randint(0, 2)),
                "q2": str(rnd.randint(0, 2)),
                "q3": str(rnd.randint(0, 2)),
                "q4": str(rnd.randint(0, 1)),
                "feedback": "",
            }
            r = await c.post(f"/a/{aid}/", data=form)
            if r.status_code != 302:
                st["errors"].append(f"post {r.status_code} {r.text[:100]}")
                return
            done = aid
            loc = r.headers["location"]
            if "/a/" not in loc:
                aid = None
            else:
                r = await c.get(loc)
                if r.status_code != 200:
                    st["errors"].append(f"get {r.status_code}")
                    return
                aid = int(loc.rstrip("/").rsplit("/", 1)[1])
            st["cycle"].append(time.perf_counter() - t0)
            st["done"].append(done)


def run_web(port: int, clients: int, seconds: float, cfg: dict) -> dict:
    import resource

    async def main() -> dict:
        st: dict = {"cycle": [], "errors": [], "done": []}
        ru0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        await asyncio.gather(*[web_client(i, port, cfg, t0 + seconds, st) for i in range(clients)])
        el = time.perf_counter() - t0
        ru1 = resource.getrusage(resource.RUSAGE_SELF)
        cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
        return {
            "clients": clients,
            "seconds": round(el, 1),
            "annotations": len(st["done"]),
            "per_s": round(len(st["done"]) / el, 1),
            "cycle_p50_ms": round(pct(st["cycle"], 50), 1),
            "cycle_p95_ms": round(pct(st["cycle"], 95), 1),
            "cycle_p99_ms": round(pct(st["cycle"], 99), 1),
            "errors": len(st["errors"]),
            "duplicates": len(st["done"]) - len(set(st["done"])),
            "loadgen_cpu_pct": round(cpu / el * 100),
            "error_lines": sorted(set(st["errors"]))[:3],
        }

    return asyncio.run(main())


def warm_up(port: int, cfg: dict) -> None:
    """Load the app in every worker (URL conf, API, the annotate template, first connections)
    before timing: the API's next for each client, and the first page of a few."""
    import http.client

    for i, entry in enumerate(cfg["clients"][:64]):
        headers = {"Cookie": f"sessionid={entry['cookie']}"}
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request("GET", f"/api/projects/{cfg['project']}/next/", headers=headers)
        resp = conn.getresponse()
        body = resp.read()
        conn.close()
        if i < 8 and resp.status == 200:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            conn.request("GET", f"/a/{json.loads(body)['id']}/", headers=headers)
            conn.getresponse().read()
            conn.close()


# ----------------------------------------------------------------------------- one database
def bench_database(args) -> list[dict]:
    """Runs in a child process per database: Django is set up once for that database."""
    sys.path.insert(0, str(ROOT / "perf"))
    import _common

    code_dir = Path(args.code_dir).resolve()
    if code_dir != ROOT:
        # another checkout (e.g. the code before a change): its own models, migrations and
        # services build the database the server it serves will use
        sys.path.insert(0, str(code_dir))
        os.chdir(code_dir)
    info = _common.setup_django(args.database_url, keep=False)
    from django.db import connections

    tmp = Path(info["tmp"])
    images = tmp / "images"
    make_images(images)
    backend = info["backend"]
    server = args.sqlite_server if backend == "sqlite" else args.pg_server
    env = dict(os.environ)
    env.update(DEBUG="0", DB_CONN_MAX_AGE="600", PYTHONUNBUFFERED="1")
    for key in ("HV_API_RATE_USER", "HV_API_RATE_ANON"):
        env.pop(key, None)  # the server keeps its production rate limits
    print(
        f"[loadgen_bench] {backend} {info['server_version']}, server {server} from {code_dir}, "
        f"load average {os.getloadavg()}",
        flush=True,
    )
    results = []
    for clients in args.clients:
        for path in args.paths:
            tag = f"{backend[:2]}{clients}{path[0]}{secrets.token_hex(2)}"
            items = max(int(args.rate_guess * args.seconds * 1.5), clients * 40)
            items = max(items, clients * 2)
            t0 = time.perf_counter()
            cfg = seed(clients=clients, items=items, images=images, tag=tag)
            seed_s = time.perf_counter() - t0
            cfg_path = tmp / f"clients_{tag}.json"
            cfg_path.write_text(json.dumps({"project": cfg["project"], "clients": cfg["clients"]}))
            connections.close_all()
            port = free_port()
            profile_dir = None
            if args.profile_server:
                profile_dir = tmp / f"profile_{tag}"
                profile_dir.mkdir()
            proc = start_gunicorn(code_dir, env, server, port, profile_dir, access_log=args.access_log)
            try:
                warm_up(port, cfg)
                before = invariants(cfg["project"], 1)["annotations"]
                la0 = os.getloadavg()[0]
                pg_pid = int(os.environ.get("HV_BENCH_PG_PID", "0") or 0)
                cpu0 = (tree_cpu(proc.pid), tree_cpu(pg_pid), machine_busy())
                if path == "api":
                    res = run_loadgen(port, clients, args.seconds, cfg_path)
                else:
                    res = run_web(port, clients, args.seconds, cfg)
                cpu1 = (tree_cpu(proc.pid), tree_cpu(pg_pid), machine_busy())
                la1 = os.getloadavg()[0]
            finally:
                stop(proc)
            connections.close_all()
            if profile_dir is not None:
                import pstats

                stats = pstats.Stats(*[str(p) for p in sorted(profile_dir.glob("worker_*.prof"))])
                print(f"[loadgen_bench] server profile (CPU time, all workers), {path} {clients} clients:")
                stats.sort_stats(args.profile_sort).print_stats(args.profile_lines)
            inv = invariants(cfg["project"], 1)
            stored = inv["annotations"] - before
            ok = (
                res["errors"] == 0
                and res["duplicates"] == 0
                and stored == res["annotations"]
                and inv["max_per_item"] <= 1
                and inv["submitted_without_annotation"] == 0
                and inv["annotation_not_submitted"] == 0
            )
            row = {
                "db": backend,
                "server": server,
                "path": path,
                "clients": clients,
                "per_s": res["per_s"],
                "p50_ms": res["cycle_p50_ms"],
                "p95_ms": res["cycle_p95_ms"],
                "p99_ms": res.get("cycle_p99_ms"),
                "errors": res["errors"],
                "duplicates": res["duplicates"],
                "annotations": res["annotations"],
                "stored": stored,
                "max_per_item": inv["max_per_item"],
                "checks": "ok" if ok else "FAILED",
                "loadgen_cpu_pct": res.get("loadgen_cpu_pct"),
                "load_avg": [round(la0, 2), round(la1, 2)],
                # CPU ms per stored annotation: the web server, PostgreSQL, and the whole machine
                # (which includes the client and whatever else the shared machine ran meanwhile)
                "cpu_ms_per_annotation": {
                    name: round((cpu1[i] - cpu0[i]) * 1000 / max(stored, 1), 2)
                    for i, name in enumerate(("server", "postgres", "machine"))
                },
                "items": items,
                "seed_s": round(seed_s, 1),
            }
            results.append(row)
            print(
                f"[loadgen_bench] {backend:<10} {server:<13} {path:<3} {clients:>4} clients: "
                f"{row['per_s']:>7.1f} annotations/s  p50 {row['p50_ms']:>7.1f}  p95 {row['p95_ms']:>7.1f}  "
                f"p99 {row['p99_ms'] if row['p99_ms'] is not None else float('nan'):>7.1f} ms  errors {row['errors']}  "
                f"dup {row['duplicates']}  stored {stored}/{res['annotations']}  max/item {inv['max_per_item']}  "
                f"[{row['checks']}]  loadgen cpu {row['loadgen_cpu_pct']}%  load {row['load_avg']}  "
                f"cpu ms/annotation {row['cpu_ms_per_annotation']}",
                flush=True,
            )
            for line in res.get("error_lines", [])[:3]:
                print(f"    {line}", flush=True)
            if args.sleep:
                time.sleep(args.sleep)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", choices=["postgres", "sqlite", "both"], default="both")
    parser.add_argument("--database-url", default="", help="a PostgreSQL server to use instead of a throwaway one")
    parser.add_argument("--clients", default="32", help="comma-separated client counts (default 32)")
    parser.add_argument("--sqlite-clients", default="", help="client counts on SQLite (default: --clients)")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--path", choices=["api", "web", "both"], default="api")
    parser.add_argument("--pg-server", default="gthread:2x8", help="sync:N or gthread:NxT on PostgreSQL")
    parser.add_argument("--sqlite-server", default="gthread:1x4", help="as scripts/run: one process, 4 threads")
    parser.add_argument("--code-dir", default=str(ROOT), help="the checkout gunicorn serves (default: this one)")
    parser.add_argument("--rate-guess", type=float, default=800, help="sizes the item count (x seconds x 1.5)")
    parser.add_argument("--fast-pg", action="store_true", help="fsync off (the test server's settings)")
    parser.add_argument("--sleep", type=float, default=2, help="pause between runs (s)")
    parser.add_argument("--access-log", action="store_true", help="gunicorn writes an access log (as make run)")
    parser.add_argument("--profile-server", action="store_true", help="cProfile the workers (use sync:N)")
    parser.add_argument("--profile-sort", default="tottime", help="pstats sort key for --profile-server")
    parser.add_argument("--profile-lines", type=int, default=40)
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.clients = [int(c) for c in args.clients.split(",") if c]
    args.paths = ["api", "web"] if args.path == "both" else [args.path]

    if args.child:
        print("ROWS " + json.dumps(bench_database(args)), flush=True)
        return

    sys.path.insert(0, str(ROOT / "perf"))
    import _common

    print(f"[loadgen_bench] {json.dumps(_common.machine())}", flush=True)
    rows: list[dict] = []
    for db in ("postgres", "sqlite") if args.db == "both" else (args.db,):
        pg = None
        argv = [PY, str(Path(__file__).resolve()), "--child", *sys.argv[1:]]
        argv = [a for a in argv if a != "--json" and not (args.json and a == args.json)]
        if db == "sqlite":
            url = "sqlite"
            if args.sqlite_clients:
                argv += ["--clients", args.sqlite_clients]
        elif args.database_url:
            url = args.database_url
        else:
            pg = Postgres(durable=not args.fast_pg)
            url = pg.start()
            os.environ["HV_BENCH_PG_PID"] = str(pg.postmaster_pid())
            print(f"[loadgen_bench] throwaway PostgreSQL on {url} (durable={not args.fast_pg})", flush=True)
        try:
            env = dict(os.environ, DATABASE_URL=url)
            proc = subprocess.run([*argv, "--database-url", url], env=env, text=True, capture_output=True, check=False)
            for line in proc.stdout.splitlines():
                if line.startswith("ROWS "):
                    rows += json.loads(line[5:])
                else:
                    print(line, flush=True)
            if proc.returncode:
                print(proc.stderr[-4000:], file=sys.stderr)
                raise SystemExit(f"{db} run failed ({proc.returncode})")
            noise = [ln for ln in proc.stderr.splitlines() if "locked" in ln.lower() or "error" in ln.lower()]
            if noise:
                print(f"[loadgen_bench] server stderr, {len(noise)} error lines, e.g.:", flush=True)
                for ln in noise[:5]:
                    print(f"    {ln}", flush=True)
            locked = sum("database is locked" in ln for ln in proc.stderr.splitlines())
            for row in rows:
                if row["db"] == ("sqlite" if db == "sqlite" else "postgresql"):
                    row.setdefault("database_is_locked_lines", locked)
        finally:
            if pg is not None:
                pg.stop()
    print("\n| db | server | path | clients | annotations/s | p50 ms | p95 ms | p99 ms | errors | checks |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(
            f"| {r['db']} | {r['server']} | {r['path']} | {r['clients']} | {r['per_s']} | {r['p50_ms']} | "
            f"{r['p95_ms']} | {r['p99_ms']} | {r['errors']} | {r['checks']} |"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
