"""Worker faults: a real Celery worker killed with SIGKILL in the middle of an import, a judge
run and an export, on the embedded filesystem broker and on Redis. The job's lease
(``core.heartbeat``) runs out, the reaper (``core.reaper``, what beat runs) re-queues it, and a
new worker finishes it with nothing lost or written twice; with no attempts left it is failed
with the reason, and "re-run failed" takes exactly the items that never got a result.

The lease is short here (``HV_JOB_LEASE_SECONDS`` = 3 s, beats every 0.375 s) in this process
and in the workers, so a lost worker is noticed within seconds."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from celery.app.task import Task
from django.db import connections
from django.utils import timezone

from annotation import importing
from annotation.models import ImportJob, Item
from config.celery import app
from core import jobs, reaper
from core.jobs import TERMINAL, JobStatus
from curation.models import Export
from judges import configuration, execution, runs
from judges.models import JudgeItemResult, JudgeOutput, JudgeRun
from tests import services as test_services
from tests.annotation.factories import jsonl, make_project, make_user, turing_records
from tests.judges.chat_server import ChatServer
from tests.judges.helpers import project_with_demo

LEASE_S = 3
FAST = {"backoff_s": 0.02, "max_backoff_s": 0.1, "timeout_s": 5, "max_retries": 2}
WORKER_ENV = {"HV_JOB_LEASE_SECONDS": str(LEASE_S)}


@pytest.fixture(autouse=True)
def short_lease(settings):
    settings.HV_JOB_LEASE_SECONDS = LEASE_S
    settings.HV_JOB_MAX_ATTEMPTS = 3


# ------------------------------------------------------------------------------ brokers
@contextlib.contextmanager
def app_on(broker_url: str, options: dict) -> Iterator[None]:
    """This process's Celery app publishing to the test's broker (transport options kept:
    the filesystem broker needs its folders)."""
    keys = ("broker_url", "broker_transport_options", "task_always_eager")
    saved = {k: app.conf.get(k) for k in keys}
    saved_env = os.environ.get("CELERY_BROKER_URL")
    try:
        os.environ["CELERY_BROKER_URL"] = broker_url
        app.conf.broker_url, app.conf.broker_transport_options = broker_url, options
        app.conf.task_always_eager = False
        test_services._reset_celery_connections(app)
        app.set_current()
        yield
    finally:
        for k, v in saved.items():
            app.conf[k] = v
        if saved_env is None:
            os.environ.pop("CELERY_BROKER_URL", None)
        else:
            os.environ["CELERY_BROKER_URL"] = saved_env
        test_services._reset_celery_connections(app)


@pytest.fixture(params=["filesystem", "redis"])
def workers(request, tmp_path) -> Iterator[Callable[[str], test_services.CeleryWorker]]:
    """Start workers of this test alone on its broker: the filesystem broker in a temporary
    folder, or a Redis database of its own; ``workers("name")`` starts one (and waits for it)."""
    env = dict(WORKER_ENV)
    if request.param == "filesystem":
        broker_dir = tmp_path / "broker"
        options = {
            "data_folder_in": str(broker_dir / "queue"),
            "data_folder_out": str(broker_dir / "queue"),
            "processed_folder": str(broker_dir / "processed"),
            "control_folder": str(broker_dir / "control"),
            "store_processed": False,
        }
        for folder in options.values():
            if isinstance(folder, str):
                Path(folder).mkdir(parents=True, exist_ok=True)
        broker, env["HV_BROKER_DIR"] = "filesystem://", str(broker_dir)
    else:
        redis_url = request.getfixturevalue("redis_url")
        import redis

        # Redis databases 11 down (8-11 for up to four xdist workers): never the ones the shared
        # worker (xdist index, 0-7) or tests/judges/test_worker.py (15 down, 12-15) use, so two
        # of these tests on two xdist workers never flush or consume each other's queues
        broker = test_services.redis_url_for_db(redis_url, 11 - test_services.xdist_index())
        redis.Redis.from_url(broker).flushdb()
        options = {}
    db_url = test_services.database_url_from_settings(connections["default"].settings_dict)
    started: list[test_services.CeleryWorker] = []

    def start(name: str) -> test_services.CeleryWorker:
        worker = test_services.CeleryWorker(
            broker_url=broker,
            database_url=db_url,
            result_backend="disabled",
            log_path=tmp_path / f"{name}.log",
            extra_env=env,
            include=(),
            broker_options=options,
        )
        started.append(worker.start())
        return worker

    with app_on(broker, options):
        yield start
    for worker in started:
        worker.stop()


def kill(worker: test_services.CeleryWorker) -> None:
    """SIGKILL: no warm shutdown, nothing acknowledged, no last word to the database."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(worker.proc.pid, signal.SIGKILL)
    worker.proc.wait(10)


def wait_for(what: str, done: Callable[[], bool], timeout: float = 60, worker=None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if done():
            return
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}; log:\n{worker.log_tail() if worker else ''}", pytrace=False)


def reaped(job, worker=None) -> str:
    """Run the reaper (what beat runs every HV_JOB_REAP_SECONDS) until it acts on ``job``, and
    return what it did; while the job's last heartbeat is younger than the lease it must not act."""
    outcome: list[str] = []

    def act() -> bool:
        job.refresh_from_db()
        early = timezone.now() < (job.heartbeat_at or job.created_at) + timedelta(seconds=LEASE_S - 0.5)
        counts = reaper.reap()
        job.refresh_from_db()
        if early:
            assert (
                counts == {reaper.REQUEUED: 0, reaper.FAILED: 0, reaper.RESENT: 0} and job.status == JobStatus.RUNNING
            )
            return False
        outcome.extend(k for k, v in counts.items() if v)
        return bool(outcome)

    wait_for("the reaper", act, timeout=4 * LEASE_S + 10, worker=worker)
    return outcome[0]


def ended(job) -> Callable[[], bool]:
    def check() -> bool:
        job.refresh_from_db()
        return job.status in TERMINAL

    return check


# ------------------------------------------------------------------------------ import
@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_an_import_killed_mid_run_is_requeued_and_imports_every_line_once(workers, settings):
    n = 60_000
    settings.HV_INLINE_IMPORT_BYTES = 0
    owner = make_user("owner", researcher=True)
    project = make_project("cqbench.turing", owner=owner)
    first = workers("first")
    job = importing.start_import(
        project=project, user=owner, data_name="big.jsonl", data_stream=[jsonl(turing_records(n)).encode()]
    )
    job.refresh_from_db()
    claimed: dict = {}

    def beating() -> bool:  # running, and its worker has beaten at least once since the claim
        job.refresh_from_db()
        if job.status == JobStatus.RUNNING and not claimed:
            claimed["at"] = job.heartbeat_at
        return job.status == JobStatus.RUNNING and job.heartbeat_at != claimed.get("at")

    wait_for("the import to run", beating, worker=first)
    kill(first)
    job.refresh_from_db()
    assert job.status == JobStatus.RUNNING and job.attempts == 1
    assert not Item.objects.filter(project=project).exists()  # all or nothing: nothing yet
    assert Path(job.data_file).is_file()

    assert reaped(job, first) == reaper.REQUEUED
    assert job.status == JobStatus.QUEUED
    second = workers("second")
    wait_for("the import to end", ended(job), worker=second)
    assert job.status == JobStatus.DONE, job.report
    assert job.attempts == 2 and job.report["items_created"] == n
    assert Item.objects.filter(project=project).count() == n


# ------------------------------------------------------------------------------ judge run
@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_a_judge_run_killed_mid_run_resumes_only_the_missing_outputs(workers, tmp_path):
    owner = make_user("owner", researcher=True)
    project = project_with_demo("cultivate.faithfulness", owner, tmp_path, n=24)
    with ChatServer(score=3, delay_s=0.1) as server:
        config = configuration.create_judge_config(
            project=project,
            name="slow",
            backend="openai_chat",
            model_id="m",
            params={"base_url": server.base_url, **FAST, "concurrency": 1, "batch_size": 1},
            passes=2,
        )
        first = workers("first")
        run = runs.start_judge_run(config=config, chunk_size=4)
        wait_for("some outputs", lambda: JudgeOutput.objects.filter(run=run).count() >= 6, worker=first)
        kill(first)
        run.refresh_from_db()
        partial = JudgeOutput.objects.filter(run=run).count()
        assert run.status == JobStatus.RUNNING and 0 < partial < 2 * run.total
        kept = set(JudgeOutput.objects.filter(run=run).values_list("id", flat=True))

        assert reaped(run, first) == reaper.REQUEUED
        assert run.status == JobStatus.RUNNING and run.attempts == 2
        asked_before = len(server.requests)
        second = workers("second")
        wait_for("the run to end", ended(run), worker=second)
    assert run.status == JobStatus.DONE, run.message
    outputs = JudgeOutput.objects.filter(run=run)
    assert outputs.count() == 2 * run.total  # every (item, pass) once
    assert JudgeItemResult.objects.filter(run=run, status="ok").count() == run.total
    assert kept <= set(outputs.values_list("id", flat=True))  # what was judged before the kill stays
    # the new workers asked only for what was missing (plus the requests cut off by the kill)
    per_output = -(-asked_before // partial)
    assert len(server.requests) - asked_before <= per_output * (2 * run.total - partial + 2)


# ------------------------------------------------------------------------------ export
@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_an_export_killed_mid_run_is_rewritten_by_the_next_worker(workers, settings):
    settings.HV_INLINE_IMPORT_BYTES = 1 << 30
    owner = make_user("owner", researcher=True)
    project = make_project("cqbench.turing", owner=owner)
    report = importing.import_items(project=project, data=jsonl(turing_records(40_000)), data_format="jsonl")
    assert report.ok, report.errors
    first = workers("first")
    export = Export.objects.create(project=project, created_by=owner, content="items", format="jsonl", scope="all")
    jobs.send(export)
    wait_for(
        "the export to make progress",
        lambda: export.refresh_from_db() or (export.status == JobStatus.RUNNING and export.progress > 0),
        worker=first,
    )
    kill(first)
    export.refresh_from_db()
    assert export.status == JobStatus.RUNNING and export.progress < 1

    assert reaped(export, first) == reaper.REQUEUED
    second = workers("second")
    wait_for("the export to end", ended(export), worker=second)
    assert export.status == JobStatus.DONE, export.message
    assert export.attempts == 2
    main = next(f for f in export.files if f["name"].endswith(".jsonl"))
    assert main["rows"] == 40_000


# ------------------------------------------------------------------------------ no attempts left
@pytest.mark.django_db
def test_a_lost_job_with_no_attempts_left_fails_with_the_reason(settings, tmp_path):
    settings.HV_JOB_MAX_ATTEMPTS = 2
    owner = make_user("owner", researcher=True)
    project = make_project("cqbench.turing", owner=owner)
    staged = tmp_path / "data.jsonl"
    staged.write_text(jsonl(turing_records(3)))
    long_ago = timezone.now() - timedelta(seconds=LEASE_S + 1)
    job = ImportJob.objects.create(
        project=project, data_file=str(staged), data_format="jsonl", status="running", attempts=2, worker="w:1"
    )
    ImportJob.objects.filter(pk=job.pk).update(heartbeat_at=long_ago)
    fresh = ImportJob.objects.create(project=project, data_file=str(staged), data_format="jsonl", status="running")
    ImportJob.objects.filter(pk=fresh.pk).update(heartbeat_at=timezone.now())
    gone = ImportJob.objects.create(
        project=project, data_file=str(tmp_path / "deleted.jsonl"), data_format="jsonl", status="running"
    )
    ImportJob.objects.filter(pk=gone.pk).update(heartbeat_at=long_ago)

    assert reaper.reap() == {reaper.REQUEUED: 0, reaper.FAILED: 2, reaper.RESENT: 0}
    for j in (job, fresh, gone):
        j.refresh_from_db()
    assert job.status == "failed" and job.finished_at is not None
    assert job.report["errors"][0].startswith("the worker stopped: no heartbeat since ")
    assert "(worker w:1)" in job.report["errors"][0] and "gave up after 2 attempts" in job.report["errors"][0]
    assert gone.status == "failed" and "uploaded file is gone" in gone.report["errors"][0]
    assert fresh.status == "running"  # its lease holds: left alone
    assert reaper.reap() == {reaper.REQUEUED: 0, reaper.FAILED: 0, reaper.RESENT: 0}


@pytest.mark.django_db
def test_a_reaped_import_that_fails_leaves_no_staged_upload(settings, tmp_path):
    """The run deletes its staged upload when it ends; a job failed by the reaper never ends its
    run, so the reaper deletes it (issue 12, finding 10)."""
    from annotation.staging import staging_root

    settings.MEDIA_ROOT = tmp_path / "media"
    settings.HV_JOB_MAX_ATTEMPTS = 1
    project = make_project("cqbench.turing", owner=make_user("owner", researcher=True))
    folder = staging_root() / "lost-upload"
    folder.mkdir(parents=True)
    (folder / "data.jsonl").write_text(jsonl(turing_records(2)))
    job = ImportJob.objects.create(
        project=project, data_file=str(folder / "data.jsonl"), data_format="jsonl", status="running", attempts=1
    )
    ImportJob.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=LEASE_S + 1))
    assert reaper.reap() == {reaper.REQUEUED: 0, reaper.FAILED: 1, reaper.RESENT: 0}
    job.refresh_from_db()
    assert job.status == "failed" and not folder.exists()


@pytest.mark.django_db(transaction=True)
def test_a_queued_job_nobody_claims_is_sent_again_once_per_interval(settings, tmp_path, monkeypatch):
    """A queued job whose message left with a killed worker (filesystem broker: read, then the
    worker died before claiming) would wait for ever; after HV_JOB_RESEND_SECONDS its task is
    sent again, at most once per interval, and a fresh queued job is left alone."""
    settings.HV_JOB_RESEND_SECONDS = 60
    project = make_project("cqbench.turing", owner=make_user("owner", researcher=True))
    sent: list[tuple[str, int]] = []
    # what the broker is handed, through the sender annotation.tasks registered for imports
    monkeypatch.setattr(Task, "delay", lambda self, job_id: sent.append((self.name, job_id)))
    old = ImportJob.objects.create(project=project, data_file=str(tmp_path / "d.jsonl"), data_format="jsonl")
    ImportJob.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(seconds=120))
    new = ImportJob.objects.create(project=project, data_file=str(tmp_path / "e.jsonl"), data_format="jsonl")
    assert old.status == new.status == "queued"
    assert reaper.reap() == {reaper.REQUEUED: 0, reaper.FAILED: 0, reaper.RESENT: 1}
    assert sent == [("annotation.run_import", old.pk)]
    assert reaper.reap()[reaper.RESENT] == 0 and len(sent) == 1  # not again within the interval
    old.refresh_from_db()
    assert old.status == "queued" and old.attempts == 0  # a re-send is no attempt


@pytest.mark.django_db
def test_rerun_after_a_lost_worker_takes_exactly_the_items_that_never_got_a_result(settings, tmp_path):
    settings.HV_JOB_MAX_ATTEMPTS = 1
    owner = make_user("owner", researcher=True)
    project = project_with_demo("cultivate.faithfulness", owner, tmp_path, n=10)
    with ChatServer(score=3) as server:
        config = configuration.create_judge_config(
            project=project, name="j", backend="openai_chat", model_id="m", params={"base_url": server.base_url, **FAST}
        )
        run = runs.start_judge_run(config=config, chunk_size=4)
        execution.execute_judge_chunk(run_id=run.id, item_ids=run.item_ids[:4])  # one chunk ran, then the worker died
    run.refresh_from_db()
    assert run.status == "running" and run.attempts == 1
    with pytest.raises(Exception, match="wait for the run to finish"):
        runs.rerun_failed_items(run=run)
    JudgeRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=LEASE_S + 1))
    run.refresh_from_db()
    reaper.check(run)  # what the run's page does when it is read
    run.refresh_from_db()
    assert run.status == "failed" and run.message.startswith("the worker stopped: no heartbeat since ")
    assert "gave up after 1 attempts" in run.message
    again = runs.rerun_failed_items(run=run)
    assert again.item_ids == run.item_ids[4:] and again.parent_id == run.pk


def test_the_reaper_runs_on_beat():
    from django.conf import settings

    from core import tasks

    schedule = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert tasks.reap_jobs.name in schedule and "core.tasks" in settings.CELERY_IMPORTS
    assert app.tasks[tasks.reap_jobs.name] is not None


# ------------------------------------------------------------------------------ scripts/run
def _processes(var_dir: Path, role: str, program: bytes = b"celery") -> list[int]:
    """Live `celery ... <role>` (or other ``program``) processes started for this var dir, found
    by their environment."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        mine = f"HV_VAR_DIR={var_dir}".encode() in environ
        if mine and state != "Z" and program in b" ".join(args[:3]) and role.encode() in b" ".join(args):
            found.append(int(entry.name))
    return found


def _stop_web(var_dir: Path) -> bool:
    """Kill the gunicorn processes of this var dir (orphans of a killed run); True when none is left."""
    for pid in _processes(var_dir, "config.wsgi", program=b"gunicorn"):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return not _processes(var_dir, "config.wsgi", program=b"gunicorn")


def _healthy(port: int) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.mark.postgres  # its web and worker processes share the test database
def test_make_run_restarts_a_killed_worker_keeps_serving_and_runs_one_beat(tmp_path):
    import socket
    import subprocess

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "CELERY_", "MEDIA_ROOT", "HV_"))}
    env.update(
        HV_VAR_DIR=str(tmp_path), PORT=str(port), HV_DEMO="0", HV_TEST_RUN_ID=os.environ.get("HV_TEST_RUN_ID", "")
    )
    root = Path(__file__).resolve().parents[2]

    def start() -> subprocess.Popen:
        log = open(tmp_path / "run.log", "ab")  # noqa: SIM115 - the child holds it
        return subprocess.Popen(
            [str(root / "scripts" / "run")],
            cwd=root,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def log() -> str:
        return (tmp_path / "run.log").read_text(errors="replace")[-4000:]

    run = start()
    try:
        wait_for("the web process", lambda: _healthy(port), timeout=120)
        wait_for("worker and beat", lambda: _processes(tmp_path, "worker") and _processes(tmp_path, "beat"), 60)
        (worker,) = _processes(tmp_path, "worker")
        os.kill(worker, signal.SIGKILL)
        wait_for("a new worker", lambda: _processes(tmp_path, "worker") not in ([], [worker]), timeout=60)
        assert _healthy(port), log()
        assert len(_processes(tmp_path, "beat")) == 1, log()

        # the script itself killed: its beat is orphaned; the next run stops it, so one beat runs
        (beat,) = _processes(tmp_path, "beat")
        os.kill(run.pid, signal.SIGKILL)
        run.wait(10)
        for pid in _processes(tmp_path, "worker"):
            os.kill(pid, signal.SIGKILL)
        wait_for("the old web to stop", lambda: not _healthy(port) or _stop_web(tmp_path), timeout=30)
        run = start()
        wait_for("the second run", lambda: _healthy(port) and beat not in _processes(tmp_path, "beat"), timeout=120)
        wait_for("its beat", lambda: len(_processes(tmp_path, "beat")) == 1, timeout=30)
        assert "stopping the beat left running by an earlier run" in log()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGTERM)
        run.wait(30)
        for role in ("worker", "beat"):
            for pid in _processes(tmp_path, role):
                os.kill(pid, signal.SIGKILL)
        _stop_web(tmp_path)


# ------------------------------------------------------------------ issue 37: a killed export's temp files
def leave_partial_files(export) -> list:
    """What a worker killed mid-export leaves: a table and a Hugging Face folder not yet renamed."""
    from curation.exports import export_root

    root = export_root(export)
    root.mkdir(parents=True, exist_ok=True)
    table = root / ".tmp-0123456789ab-items.jsonl"
    table.write_text('{"half": "a row"')
    folder = root / ".tmp-ba9876543210-dataset"
    (folder / "images").mkdir(parents=True)
    (folder / "images" / "x.png").write_bytes(b"\x89PNG")
    return [table, folder]


@pytest.mark.django_db
def test_a_killed_export_failed_by_the_reaper_leaves_no_temp_file(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.HV_JOB_MAX_ATTEMPTS = 1
    owner = make_user("owner", researcher=True)
    project = make_project("cqbench.turing", owner=owner)
    export = Export.objects.create(
        project=project, created_by=owner, content="items", format="jsonl", scope="all", status="running", attempts=1
    )
    Export.objects.filter(pk=export.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=LEASE_S + 1))
    left = leave_partial_files(export)
    assert reaper.reap() == {reaper.REQUEUED: 0, reaper.FAILED: 1, reaper.RESENT: 0}
    export.refresh_from_db()
    assert export.status == "failed"
    assert not any(p.exists() for p in left)


@pytest.mark.django_db
def test_a_requeued_export_removes_what_its_killed_attempt_left(settings, tmp_path):
    from curation.exports import export_root, run_export_job

    settings.MEDIA_ROOT = tmp_path / "media"
    owner = make_user("owner", researcher=True)
    project = make_project("cqbench.turing", owner=owner)
    report = importing.import_items(project=project, data=jsonl(turing_records(3)), data_format="jsonl")
    assert report.ok, report.errors
    export = Export.objects.create(project=project, created_by=owner, content="items", format="jsonl", scope="all")
    left = leave_partial_files(export)
    export = run_export_job(export=export)
    assert export.status == "done", export.message
    assert not any(p.exists() for p in left)
    assert not list(export_root(export).glob(".tmp-*"))
