"""Issue 37, M4: nobody stalls the shared worker.

The attack: a judge with ``max_retries``, ``backoff_s``, ``max_backoff_s`` and ``timeout_s`` in
the millions held a worker thread for days, and Cancel answered 200 without freeing it. Now

- every parameter of the retry loop has an upper bound, refused when the judge is created (form
  and API) and again by the worker for a row written before (nothing is sent);
- a cancel ends a retry's back-off within the watch's poll (here 0.05 s), the chunk stores
  nothing after it and gives its thread and its project's slot back;
- a project holds at most ``HV_JUDGE_PROJECT_SHARE`` chunks at work; its next chunk is sent
  again after a countdown, holding no thread, while another project's chunk runs."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from datetime import timedelta

import pytest
from django.db import connections
from django.urls import reverse
from django.utils import timezone

from core.errors import DomainError
from judges import configuration, execution, params, runs, share
from judges.backends import BackendUnavailable
from judges.models import JudgeChunkSlot, JudgeConfig, JudgeOutput, JudgeRun
from judges.registry import backend_for

from .chat_server import ChatServer
from .helpers import project_with_demo
from .test_openai_backend import spec

pytestmark = pytest.mark.django_db
FAST = {"backoff_s": 0.01, "max_backoff_s": 0.05, "timeout_s": 2, "max_retries": 1}
# the attack of the finding: a retry loop of days per request
HUGE = {"max_retries": 1_000_000, "backoff_s": 1e9, "max_backoff_s": 1e9, "timeout_s": 1e9, "concurrency": 100_000}


@pytest.fixture
def sent(monkeypatch):
    """The chunks handed to the broker: (args, queue, countdown) of each ``run_judge_chunk``."""
    from judges import tasks

    calls: list[tuple[list, str, float | None]] = []
    monkeypatch.setattr(
        tasks.run_judge_chunk,
        "apply_async",
        lambda args, queue, countdown=None: calls.append((args, queue, countdown)),
    )
    return calls


def create(project, name="j", **p):
    return configuration.create_judge_config(
        project=project, name=name, backend="openai_chat", model_id="m", params={**FAST, **p}
    )


# ------------------------------------------------------------------------------ bounds
@pytest.mark.parametrize("name", sorted(HUGE))
def test_every_retry_loop_parameter_has_an_upper_bound(researcher, tmp_path, name):
    project = project_with_demo("cultivate.faithfulness", researcher, tmp_path)
    with pytest.raises(DomainError) as exc:
        create(project, base_url="http://127.0.0.1:9/v1", **{name: HUGE[name]})
    declared = params.declared(params.OPENAI_CHAT, name)
    assert f"params.{name}" in str(exc.value) and declared.range_text() in str(exc.value)
    assert not JudgeConfig.objects.exists()


def test_the_bounds_themselves_are_allowed(researcher, tmp_path):
    project = project_with_demo("cultivate.faithfulness", researcher, tmp_path)
    assert create(
        project,
        base_url="http://127.0.0.1:9/v1",
        max_retries=10,
        backoff_s=120,
        max_backoff_s=120,
        timeout_s=600,
        concurrency=64,
    )
    # the documented figures are the declared ones
    assert [params.declared(params.OPENAI_CHAT, n).max for n in ("max_retries", "backoff_s", "timeout_s")] == [
        10,
        120,
        600,
    ]


def test_the_api_refuses_the_unbounded_parameters_with_a_400(researcher, tmp_path, client):
    project = project_with_demo("cultivate.faithfulness", researcher, tmp_path)
    client.force_login(researcher)
    resp = client.post(
        reverse("api_judges", args=[project.id]),
        data=json.dumps(
            {
                "name": "k",
                "backend": "openai_chat",
                "model_id": "m",
                "params": {"base_url": "http://127.0.0.1:9/v1", **HUGE},
            }
        ),
        content_type="application/json",
    )
    assert resp.status_code == 400
    assert all(f"params.{name}" in resp.json()["detail"] for name in HUGE)
    assert not JudgeConfig.objects.exists()


def test_the_worker_refuses_a_stored_unbounded_judge_and_sends_nothing(
    researcher, tmp_path, sent, django_capture_on_commit_callbacks
):
    project = project_with_demo("cultivate.faithfulness", researcher, tmp_path)
    with ChatServer() as server:
        config = create(project, base_url=server.base_url)
        # a row written before the bounds (or by hand)
        JudgeConfig.objects.filter(pk=config.pk).update(params={**config.params, **HUGE})
        with pytest.raises(BackendUnavailable, match=r"params\.backoff_s must be a number between 0 and 120"):
            backend_for(spec("cultivate.faithfulness", server.base_url, **HUGE))
        run = runs.start_judge_run(config=JudgeConfig.objects.get(pk=config.pk))
        execution.execute_judge_chunk(run_id=run.id, item_ids=run.item_ids)
    run.refresh_from_db()
    assert run.status == "failed" and "params.max_retries must be a whole number between 0 and 10" in run.message
    assert server.requests == [] and not JudgeChunkSlot.objects.exists()


# ------------------------------------------------------------------------------ cancel
@pytest.mark.django_db(transaction=True)
def test_cancel_ends_a_long_back_off_within_the_poll_and_frees_the_thread(researcher, tmp_path, settings, sent):
    """The retry loop at its bounds (each back-off a minute or two) against an endpoint that
    answers 503: the cancel ends the wait at once, no further attempt is made, nothing is
    stored, and the chunk's thread and slot are given back."""
    settings.HV_JUDGE_CANCEL_POLL_SECONDS = 0.05
    project = project_with_demo("cultivate.faithfulness", researcher, tmp_path, n=1)
    with ChatServer() as server:
        server.script.extend([("status", 503)] * 50)
        config = create(
            project, base_url=server.base_url, max_retries=10, backoff_s=120, max_backoff_s=120, concurrency=1
        )
        run = runs.start_judge_run(config=config)
        outcome: list[JudgeRun] = []

        def chunk() -> None:
            try:
                outcome.append(execution.execute_judge_chunk(run_id=run.id, item_ids=run.item_ids))
            finally:
                connections.close_all()

        worker = threading.Thread(target=chunk, daemon=True)
        worker.start()
        deadline = timezone.now() + timedelta(seconds=20)
        while not server.requests and timezone.now() < deadline:  # the first attempt got its 503
            worker.join(0.02)
        assert len(server.requests) == 1
        run.refresh_from_db()
        assert run.status == "running" and share.project_slots(project.id) == 1  # in its back-off
        runs.cancel_judge_run(run=run)
        worker.join(20)  # without the cancel reaching it, the back-off alone is over a minute
        assert not worker.is_alive()
    assert len(server.requests) == 1  # no attempt after the cancel
    assert outcome[0].status == "cancelled"
    assert not JudgeOutput.objects.filter(run=run).exists()  # a cut-short answer is no output
    assert share.project_slots(project.id) == 0


# ------------------------------------------------------------------------------ the share
def test_a_project_at_its_share_waits_in_the_queue_while_another_project_runs(
    researcher, tmp_path, settings, sent, django_capture_on_commit_callbacks
):
    settings.HV_JUDGE_PROJECT_SHARE = 1
    settings.HV_JUDGE_SHARE_RETRY_SECONDS = 3
    busy = project_with_demo("cultivate.faithfulness", researcher, tmp_path / "a", n=2)
    other = project_with_demo("cultivate.faithfulness", researcher, tmp_path / "b", n=2)
    with ChatServer() as server:
        first = runs.start_judge_run(config=create(busy, "first", base_url=server.base_url))
        second = runs.start_judge_run(config=create(busy, "second", base_url=server.base_url))
        elsewhere = runs.start_judge_run(config=create(other, "elsewhere", base_url=server.base_url))
        sent.clear()
        held = share.take_slot(first)  # a chunk of the busy project at work on the other thread
        assert isinstance(held, JudgeChunkSlot)
        waited = execution.execute_judge_chunk(run_id=second.id, item_ids=second.item_ids)
        assert waited.status == "queued" and server.requests == []  # no thread held, nothing sent
        [(args, queue, countdown)] = sent
        assert args == [second.id, second.item_ids] and queue == second.queue and 3 <= countdown <= 4.5
        assert share.project_slots(busy.id) == 1  # the waiting chunk took no slot
        # another project is not held up by the busy one
        assert execution.execute_judge_chunk(run_id=elsewhere.id, item_ids=elsewhere.item_ids).status == "done"
        assert len(server.requests) == 2 * 3  # two items, three questions each
        share.give_back(held)
        assert execution.execute_judge_chunk(run_id=second.id, item_ids=second.item_ids).status == "done"
    assert share.project_slots(busy.id) == 0 and share.project_slots(other.id) == 0


def test_the_slot_of_a_killed_worker_lapses_and_zero_turns_the_share_off(researcher, tmp_path, settings, sent):
    settings.HV_JUDGE_PROJECT_SHARE = 1
    project = project_with_demo("cultivate.faithfulness", researcher, tmp_path, n=1)
    with ChatServer() as server:
        run = runs.start_judge_run(config=create(project, base_url=server.base_url))
        dead = share.take_slot(run)
        assert share.take_slot(run) is False  # the project holds its share
        # its worker was killed: no watch renews the slot, which lapses
        JudgeChunkSlot.objects.filter(pk=dead.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
        taken = share.take_slot(run)
        assert isinstance(taken, JudgeChunkSlot) and not JudgeChunkSlot.objects.filter(pk=dead.pk).exists()
        # a worker of this machine that was killed and started again: its slot goes at once
        gone = subprocess.Popen([sys.executable, "-c", "pass"])
        gone.wait()
        JudgeChunkSlot.objects.filter(pk=taken.pk).update(worker=f"{socket.gethostname()}:{gone.pid}")
        again = share.take_slot(run)
        assert isinstance(again, JudgeChunkSlot) and not JudgeChunkSlot.objects.filter(pk=taken.pk).exists()
        # a live one (this process) keeps its slot until it lapses
        assert again.worker == f"{socket.gethostname()}:{os.getpid()}" and share.take_slot(run) is False
        settings.HV_JUDGE_PROJECT_SHARE = 0  # no share: a chunk always runs, and takes no slot
        assert share.take_slot(run) is True
        assert execution.execute_judge_chunk(run_id=run.id, item_ids=run.item_ids).status == "done"
    assert JudgeChunkSlot.objects.filter(project=project).count() == 1  # only the one taken above


def test_two_projects_chunks_at_once_each_take_their_own_share(researcher, tmp_path, settings):
    settings.HV_JUDGE_PROJECT_SHARE = 2
    a = project_with_demo("cultivate.faithfulness", researcher, tmp_path / "a", n=1)
    b = project_with_demo("cultivate.faithfulness", researcher, tmp_path / "b", n=1)
    with ChatServer() as server:
        run_a = runs.start_judge_run(config=create(a, "a", base_url=server.base_url))
        run_b = runs.start_judge_run(config=create(b, "b", base_url=server.base_url))
        taken_a = [share.take_slot(run_a) for _ in range(3)]
        taken_b = [share.take_slot(run_b) for _ in range(3)]
    assert [isinstance(s, JudgeChunkSlot) for s in taken_a] == [True, True, False]
    assert [isinstance(s, JudgeChunkSlot) for s in taken_b] == [True, True, False]
