"""Judge runs through the services (chunks executed in-process): answers stored as the judge
rater's annotations under the same rubric validator, idempotent re-execution, passes and
ensembles combined, failures listed, re-run of failed items, cancel."""

import pytest

from agreement.selectors import ratings_frame
from annotation.models import Annotation, Assignment, Rater
from core.errors import DomainError
from judges import configuration, execution, runs
from judges.backends.base import BackendUnavailable
from judges.models import JudgeItemResult, JudgeOutput, JudgeRun
from judges.selectors import run_progress

from .chat_server import ChatServer
from .helpers import project_with_demo

pytestmark = pytest.mark.django_db
FAST = {"backoff_s": 0.01, "max_backoff_s": 0.05, "timeout_s": 2, "max_retries": 2}


def run_all(run: JudgeRun) -> JudgeRun:
    for start in range(0, len(run.item_ids), run.chunk_size):
        execution.execute_judge_chunk(run_id=run.id, item_ids=run.item_ids[start : start + run.chunk_size])
    run.refresh_from_db()
    return run


def start(config, django_capture_on_commit_callbacks, **kw) -> JudgeRun:
    with django_capture_on_commit_callbacks(execute=False):
        return runs.start_judge_run(config=config, **kw)


def test_a_cultivate_judge_run_stores_scores_as_the_model_raters_annotations(
    researcher, tmp_path, django_capture_on_commit_callbacks
):
    project = project_with_demo("cultivate.faithfulness", researcher, tmp_path)
    with ChatServer(score=4) as server:
        config = configuration.create_judge_config(
            project=project,
            name="mllm",
            backend="openai_chat",
            model_id="judge-model",
            params={"base_url": server.base_url, **FAST},
            passes=2,
            created_by=researcher,
        )
        assert config.parser == "score_is" and config.questions == ["faith", "hal", "exag"]
        run = start(config, django_capture_on_commit_callbacks, chunk_size=4)
        assert run.queue == "api" and run.status == "queued"
        run = run_all(run)
    assert run.status == "done" and run.finished_at is not None
    n = project.items.count()
    p = run_progress(run)
    assert (p["done"], p["failed"], p["remaining"], p["total"]) == (n, 0, 0, n)
    assert JudgeOutput.objects.filter(run=run).count() == 2 * n
    rater = config.rater
    assert rater.kind == Rater.Kind.MODEL and rater.backend == "openai_chat" and rater.model_id == "judge-model"
    assert len(rater.prompt_hash) == 64 and rater.parameters["passes"] == 2
    anns = Annotation.objects.filter(rater=rater)
    assert anns.count() == n
    assert all(a.answers == {"faith": 4, "hal": 4, "exag": 4} for a in anns)
    assert Assignment.objects.filter(rater=rater, status="submitted", purpose="regular").count() == n
    frame = ratings_frame(project)
    judged = frame[frame.rater_kind == "model"]
    assert set(judged.field) == {"faith", "hal", "exag"} and len(judged) == 3 * n
    # executing the same chunks again (a redelivered message) writes nothing twice
    run_all(JudgeRun.objects.get(pk=run.pk))
    assert JudgeOutput.objects.filter(run=run).count() == 2 * n and Annotation.objects.filter(rater=rater).count() == n


def test_parse_failures_are_listed_and_only_failed_items_are_rerun(
    researcher, tmp_path, django_capture_on_commit_callbacks
):
    project = project_with_demo("cultivate.faithfulness", researcher, tmp_path)
    n = project.items.count()
    with ChatServer(score=3) as server:
        config = configuration.create_judge_config(
            project=project,
            name="mllm",
            backend="openai_chat",
            model_id="m",
            params={"base_url": server.base_url, **FAST, "concurrency": 1},
        )
        # the first item's first question gets a reply outside the contract
        server.script.append(("content", "I cannot tell."))
        run = run_all(start(config, django_capture_on_commit_callbacks, chunk_size=n))
        assert run.status == "done"
        p = run_progress(run)
        assert (p["done"], p["failed"]) == (n - 1, 1)
        [failure] = JudgeItemResult.objects.filter(run=run, status="failed")
        assert "parse failed" in failure.error
        bad = JudgeOutput.objects.get(run=run, item=failure.item)
        assert "[faith] I cannot tell." in bad.raw_output and bad.parsed is None
        assert not Annotation.objects.filter(rater=config.rater, item=failure.item).exists()
        with django_capture_on_commit_callbacks(execute=False):
            rerun = runs.rerun_failed_items(run=run)
        assert rerun.item_ids == [failure.item_id] and rerun.parent_id == run.id
        rerun = run_all(rerun)
    assert rerun.status == "done"
    assert Annotation.objects.filter(rater=config.rater).count() == n


def test_passes_combine_by_mean_and_ensembles_average_their_members(
    researcher, tmp_path, django_capture_on_commit_callbacks
):
    project = project_with_demo("cultivate.faithfulness", researcher, tmp_path)
    item_ids = list(project.items.order_by("id").values_list("id", flat=True)[:2])
    with ChatServer(score=2) as low, ChatServer(score=5) as high:
        a = configuration.create_judge_config(
            project=project, name="a", backend="openai_chat", model_id="m", params={"base_url": low.base_url, **FAST}
        )
        b = configuration.create_judge_config(
            project=project, name="b", backend="openai_chat", model_id="m", params={"base_url": high.base_url, **FAST}
        )
        ens = configuration.create_judge_config(project=project, name="ensemble", backend="ensemble", members=[a, b])
        run = run_all(start(ens, django_capture_on_commit_callbacks, item_ids=item_ids))
    assert run.status == "done"
    ann = Annotation.objects.get(rater=ens.rater, item_id=item_ids[0])
    # mean of 2 and 5 = 3.5: the nearest option, ties to the higher one, and the exact mean kept
    assert ann.answers == {"faith": 4, "hal": 4, "exag": 4}
    assert ann.derived["judge_exact"]["answers"] == {"faith": 3.5, "hal": 3.5, "exag": 3.5}
    members = set(JudgeOutput.objects.filter(run=run).values_list("member__name", "pass_index"))
    assert members == {("a", 0), ("b", 1)}


def test_cancel_stops_the_run_and_later_chunks_do_nothing(researcher, tmp_path, django_capture_on_commit_callbacks):
    project = project_with_demo("cultivate.faithfulness", researcher, tmp_path)
    with ChatServer() as server:
        config = configuration.create_judge_config(
            project=project,
            name="mllm",
            backend="openai_chat",
            model_id="m",
            params={"base_url": server.base_url, **FAST},
        )
        run = start(config, django_capture_on_commit_callbacks, chunk_size=2)
        execution.execute_judge_chunk(run_id=run.id, item_ids=run.item_ids[:2])
        runs.cancel_judge_run(run=run)
        run = run_all(run)
    assert run.status == "cancelled"
    assert JudgeItemResult.objects.filter(run=run).count() == 2
    with pytest.raises(DomainError, match="already cancelled"):
        runs.cancel_judge_run(run=run)


def test_a_backend_that_cannot_run_fails_the_run_with_the_reason(
    researcher, tmp_path, django_capture_on_commit_callbacks, monkeypatch
):
    monkeypatch.delenv("HV_JUDGE_API_BASE", raising=False)
    project = project_with_demo("cultivate.faithfulness", researcher, tmp_path)
    config = configuration.create_judge_config(project=project, name="nowhere", backend="openai_chat", model_id="m")
    run = run_all(start(config, django_capture_on_commit_callbacks))
    assert run.status == "failed" and "no endpoint" in run.message
    assert not Annotation.objects.filter(rater=config.rater).exists()


def test_a_sample_of_items_and_configuration_errors(researcher, tmp_path, django_capture_on_commit_callbacks):
    project = project_with_demo("cultivate.faithfulness", researcher, tmp_path)
    config = configuration.create_judge_config(project=project, name="j", backend="openai_chat", model_id="m")
    run = start(config, django_capture_on_commit_callbacks, sample_size=3, seed=1)
    assert run.total == 3 and len(set(run.item_ids)) == 3
    with pytest.raises(DomainError, match="already has a judge"):
        configuration.create_judge_config(project=project, name="j", backend="openai_chat")
    with pytest.raises(DomainError, match="unknown"):
        configuration.create_judge_config(project=project, name="k", backend="openai_chat", questions=["nope"])
    with pytest.raises(DomainError, match="two member"):
        configuration.create_judge_config(project=project, name="e", backend="ensemble", members=[config])
    assert BackendUnavailable
