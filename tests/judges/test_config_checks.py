"""A judge configuration is checked when it is created, not when it runs: a backend asked for
questions it cannot answer is refused with the list of what it can answer (issue 10, point 7)."""

import pytest
from django.urls import reverse

from core.errors import DomainError
from judges import configuration
from judges.backends.base import FAMILIES
from judges.models import JudgeConfig
from judges.registry import BACKENDS

from .helpers import project_with_demo

pytestmark = pytest.mark.django_db


@pytest.fixture
def valueground(researcher, tmp_path):
    return project_with_demo("valueground.pair_quality", researcher, tmp_path)


@pytest.fixture
def story(researcher, tmp_path):
    return project_with_demo("cqbench.story", researcher, tmp_path)


def refused(**kwargs) -> str:
    with pytest.raises(DomainError) as exc:
        configuration.create_judge_config(**kwargs)
    assert not JudgeConfig.objects.filter(name=kwargs["name"]).exists()
    return str(exc.value)


def test_image_similarity_answers_only_its_preset_questions(valueground):
    msg = refused(project=valueground, name="ssim", backend="image_similarity", questions=["q1", "q3"])
    assert "cannot answer q1" in msg and "it can answer q3" in msg
    config = configuration.create_judge_config(project=valueground, name="ssim ok", backend="image_similarity")
    assert config.questions == ["q3"]


def test_embedding_answers_only_its_preset_questions(story):
    msg = refused(project=story, name="emb", backend="embedding", questions=["naturalness", "reflection"])
    assert "cannot answer naturalness" in msg and "it can answer rewrite_improvement, reflection" in msg
    assert configuration.create_judge_config(
        project=story, name="emb ok", backend="embedding", questions=["reflection"]
    )


def test_a_direct_backend_without_a_mode_for_the_preset_is_refused(story):
    msg = refused(project=story, name="ssim", backend="image_similarity", questions=["reflection"])
    assert "no mode" in msg and "valueground_q3" in msg


def test_an_llm_judge_answers_any_non_text_question(valueground):
    msg = refused(project=valueground, name="llm", backend="openai_chat", model_id="m", questions=["q1", "feedback"])
    assert "cannot answer feedback" in msg and "it can answer q1, q2, q3, q4" in msg
    config = configuration.create_judge_config(
        project=valueground, name="llm ok", backend="openai_chat", model_id="m", questions=["q1", "q4"]
    )
    assert config.questions == ["q1", "q4"]


def test_a_single_answer_parser_needs_one_question_per_prompt(valueground):
    msg = refused(
        project=valueground,
        name="score",
        backend="openai_chat",
        model_id="m",
        prompt_template={"system": "s", "user": "u"},
        parser="score_is",
        questions=["q1", "q2"],
    )
    assert "one answer per reply" in msg


def test_a_classifier_template_answers_only_its_flags(researcher, tmp_path):
    project = project_with_demo("counterfactuals.audit", researcher, tmp_path)
    msg = refused(
        project=project,
        name="cls",
        backend="openai_chat",
        model_id="m",
        prompt_template={"use": "counterfactuals.classifier"},
        questions=["flags", "other"],
    )
    assert "can answer only flags" in msg


def test_an_ensemble_answers_only_what_its_members_answer(valueground):
    a = configuration.create_judge_config(
        project=valueground, name="a", backend="openai_chat", model_id="m", questions=["q1", "q2"]
    )
    b = configuration.create_judge_config(
        project=valueground, name="b", backend="openai_chat", model_id="m", questions=["q2"]
    )
    msg = refused(project=valueground, name="ens", backend="ensemble", members=[a, b], questions=["q2", "q4"])
    assert "cannot answer q4" in msg and "it can answer q1, q2" in msg


def test_the_api_answers_400_with_what_the_backend_can_answer(client, researcher, valueground):
    client.force_login(researcher)
    resp = client.post(
        reverse("api_judges", args=[valueground.id]),
        {"name": "ssim", "backend": "image_similarity", "questions": ["q1"]},
        content_type="application/json",
    )
    assert resp.status_code == 400
    assert "cannot answer q1" in resp.json()["detail"] and "it can answer q3" in resp.json()["detail"]
    assert not JudgeConfig.objects.filter(project=valueground).exists()


def test_every_backend_has_its_builder():
    """``create_judge_config`` dispatches on the backend's family: every registered backend has
    the builder of its family, and every family a builder."""
    assert set(configuration.BUILDERS) == set(FAMILIES)
    assert all(entry.family in configuration.BUILDERS for entry in BACKENDS.values())
    assert set(configuration.TEMPLATE_CHECKS) == {"classifiers", "label", "format"}
