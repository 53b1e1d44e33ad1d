"""The local transformers backend with a tiny random model on CPU: loaded once per process
through from_pretrained, left padding, batched generation equal to one-by-one generation,
and a judge run that stores what the model said (a random model's replies fail to parse:
they are kept and listed, never turned into scores)."""

import pytest

from annotation.rubric import Rubric
from benchmarks.registry import get_preset
from judges import configuration
from judges.backends import ChatRequest, JudgeSpec
from judges.backends.local_transformers import loaded_models
from judges.models import JudgeItemResult, JudgeOutput
from judges.registry import backend_for

from .helpers import project_with_demo
from .test_judge_runs import run_all, start
from .tiny_model import make_tiny_causal_lm


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return str(make_tiny_causal_lm(tmp_path_factory.mktemp("tiny-llama")))


def spec(model: str, **params) -> JudgeSpec:
    p = get_preset("cqbench.story")
    return JudgeSpec(
        backend="transformers",
        model_id=model,
        prompt_template={"system": "", "user": "{story}"},
        parser="json",
        questions=("naturalness",),
        params={"max_new_tokens": 6, **params},
        rubric=Rubric.from_schema(p.rubric),
        item_fields=p.item_fields,
        preset_key=p.key,
    )


def test_batched_generation_with_left_padding_equals_one_by_one(tiny_model):
    backend = backend_for(spec(tiny_model, batch_size=4))
    assert backend.device == "cpu" and backend.dtype == "float32" and backend.kind == "causal"
    assert backend.tokenizer.padding_side == "left"
    prompts = ["score is", "the story is a value", "a", "yes no yes no the value is consistent natural story"]
    requests = [ChatRequest(system="", user=p, images=[]) for p in prompts]
    enc = backend._inputs(requests)
    lengths = enc["attention_mask"].sum(dim=1).tolist()
    assert len(set(lengths)) > 1
    assert all(row[-1] == 1 for row in enc["attention_mask"].tolist())  # padding is on the left
    batched = [r.text for r in backend.generate(requests)]
    one_by_one = [backend_for(spec(tiny_model, batch_size=1)).generate([r])[0].text for r in requests]
    assert batched == one_by_one
    assert all(r.error == "" for r in backend.generate(requests))
    # loaded once per process: both backends share the model
    assert sum(1 for k in loaded_models() if k[0] == tiny_model) == 1


def test_text_only_model_refuses_image_items(tiny_model):
    from judges.backends.base import BackendUnavailable

    backend = backend_for(spec(tiny_model))
    with pytest.raises(BackendUnavailable, match="cannot see the item images"):
        backend._inputs([ChatRequest(system="", user="x", images=["/tmp/x.png"])])


def test_a_missing_model_fails_clearly(tmp_path):
    from judges.backends.base import BackendUnavailable

    with pytest.raises(BackendUnavailable, match="cannot load model"):
        backend_for(spec(str(tmp_path / "nope")))


@pytest.mark.django_db
def test_a_judge_run_with_the_tiny_model_keeps_raw_outputs_and_lists_failures(
    researcher, tmp_path, tiny_model, django_capture_on_commit_callbacks
):
    project = project_with_demo("cqbench.story", researcher, tmp_path)
    config = configuration.create_judge_config(
        project=project,
        name="tiny",
        backend="transformers",
        model_id=tiny_model,
        params={"max_new_tokens": 8, "batch_size": 4},
        questions=["naturalness"],
    )
    run = start(config, django_capture_on_commit_callbacks)
    assert run.queue == "gpu"
    run = run_all(run)
    n = project.items.count()
    assert JudgeOutput.objects.filter(run=run).count() == n
    results = JudgeItemResult.objects.filter(run=run)
    assert results.count() == n
    # a random model does not follow the JSON contract: every failure is kept with its raw text
    for o in JudgeOutput.objects.filter(run=run):
        assert o.error.startswith(("parse failed", "invalid answer")) or o.parsed is not None
    assert run.status in ("done", "failed")
