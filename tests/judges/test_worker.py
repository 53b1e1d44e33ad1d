"""Whole judge runs through a real Celery worker on Redis (the same PostgreSQL test database):
the API-judge path against the loopback chat server with faults, the embedding judge, and a
worker killed in the middle of a run that a new worker finishes without duplicate or lost
scores."""

from __future__ import annotations

import contextlib
import os
import signal
import time

import pytest
from django.db import connections

from annotation.models import Annotation
from judges import configuration, runs
from judges.models import JudgeItemResult, JudgeOutput, JudgeRun
from judges.selectors import run_progress
from tests import services as test_services

from .chat_server import ChatServer
from .helpers import project_with_demo

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]
FAST = {"backoff_s": 0.02, "max_backoff_s": 0.1, "timeout_s": 1, "max_retries": 4}


@pytest.fixture
def media_root(settings):
    """The worker subprocess reads images under the environment's MEDIA_ROOT."""
    return settings.MEDIA_ROOT


def wait_state(run: JudgeRun, worker, timeout: float = 90, states=JudgeRun.TERMINAL) -> JudgeRun:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.status in states:
            return run
        if worker is not None and not worker.alive:
            pytest.fail(f"worker died; log:\n{worker.log_tail()}", pytrace=False)
        time.sleep(0.2)
    pytest.fail(
        f"run {run.id} still {run.status} ({run_progress(run)}); log:\n{worker.log_tail() if worker else ''}",
        pytrace=False,
    )


def test_an_api_judge_run_completes_on_the_worker_despite_faults(celery_worker_process, researcher, tmp_path):
    project = project_with_demo("cultivate.faithfulness", researcher, tmp_path)
    n = project.items.count()
    with ChatServer(score=5) as server:
        server.script.extend([("status", 429), ("status", 500), ("sleep", 1.5), ("status", 502)])
        config = configuration.create_judge_config(
            project=project,
            name="mllm",
            backend="openai_chat",
            model_id="m",
            params={"base_url": server.base_url, **FAST},
            passes=2,
        )
        run = runs.start_judge_run(config=config, chunk_size=3)
        run = wait_state(run, celery_worker_process)
    assert run.status == "done", run.message
    p = run_progress(run)
    assert (p["done"], p["failed"], p["remaining"]) == (n, 0, 0) and p["items_per_s"] > 0
    assert JudgeOutput.objects.filter(run=run).count() == 2 * n
    assert Annotation.objects.filter(rater=config.rater).count() == n
    assert "judges.run_judge_chunk" in celery_worker_process.log_text()


def test_the_embedding_judge_runs_on_the_worker(celery_worker_process, researcher, tmp_path):
    project = project_with_demo("cqbench.story", researcher, tmp_path)
    config = configuration.create_judge_config(project=project, name="minilm", backend="embedding")
    run = wait_state(runs.start_judge_run(config=config), celery_worker_process, timeout=120)
    assert run.status == "done", run.message
    assert Annotation.objects.filter(rater=config.rater).count() == project.items.count()


@pytest.fixture
def own_worker(redis_url, tmp_path):
    """A worker of this test alone (its own Redis database), which the test may kill."""
    from config.celery import app

    # Redis databases 15 down (12-15 for up to four xdist workers): disjoint from the shared
    # worker's (0-7) and tests/core/test_worker_faults.py's (8-11); a shared database let another
    # test's worker consume this one's chunks (against its own test database) and flush its queue
    broker = test_services.redis_url_for_db(redis_url, 15 - test_services.xdist_index())
    import redis

    redis.Redis.from_url(broker).flushdb()
    db_url = test_services.database_url_from_settings(connections["default"].settings_dict)

    def make(name: str):
        return test_services.CeleryWorker(
            broker_url=broker,
            database_url=db_url,
            log_path=tmp_path / f"{name}.log",
            concurrency=2,
            extra_env={"DJANGO_SETTINGS_MODULE": "tests.judges.worker_settings"},
        )

    workers = []
    with test_services.celery_app_on_broker(app, broker):

        def start(name: str):
            w = make(name).start()
            workers.append(w)
            return w

        yield start
    for w in workers:
        w.stop()


def test_a_worker_killed_mid_run_is_replaced_and_every_item_gets_exactly_one_score_per_pass(
    own_worker, researcher, tmp_path
):
    project = project_with_demo("cultivate.faithfulness", researcher, tmp_path, n=24)
    with ChatServer(score=3, delay_s=0.05) as server:
        config = configuration.create_judge_config(
            project=project,
            name="slow",
            backend="openai_chat",
            model_id="m",
            params={"base_url": server.base_url, **FAST, "concurrency": 1, "batch_size": 1},
            passes=2,
        )
        first = own_worker("first")
        run = runs.start_judge_run(config=config, chunk_size=4)
        deadline = time.monotonic() + 60
        while JudgeOutput.objects.filter(run=run).count() < 6 and time.monotonic() < deadline:
            time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(first.proc.pid, signal.SIGKILL)  # no warm shutdown: chunks are left unacked
        first.proc.wait(10)
        run.refresh_from_db()
        assert run.status == "running"
        partial = JudgeOutput.objects.filter(run=run).count()
        assert 0 < partial < 2 * run.total
        second = own_worker("second")
        run = wait_state(run, second, timeout=120)
    assert run.status == "done", run.message
    n = run.total
    outputs = JudgeOutput.objects.filter(run=run)
    assert outputs.count() == 2 * n
    per_item = {}
    for item_id, pass_index in outputs.values_list("item_id", "pass_index"):
        per_item.setdefault(item_id, []).append(pass_index)
    assert len(per_item) == n and all(sorted(v) == [0, 1] for v in per_item.values())
    assert JudgeItemResult.objects.filter(run=run, status="ok").count() == n
    assert Annotation.objects.filter(rater=config.rater).count() == n
