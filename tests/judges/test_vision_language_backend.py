"""The vision-language path of the transformers backend with a tiny random LLaVA on CPU:
AutoProcessor + AutoModelForImageTextToText loaded through from_pretrained from a folder,
chat-templated prompts with the item images, batched generation with left padding over
requests with different numbers of images equal to one-by-one generation, the images reaching
the model, and a judge run over counterfactual items whose images come from the stored assets
(a random model's replies are kept and, outside the contract, listed as failures)."""

from __future__ import annotations

import pytest
from PIL import Image

from annotation.assets import media_path
from annotation.models import Asset
from annotation.rubric import Rubric
from benchmarks.counterfactuals import CLASSIFIER as COUNTERFACTUALS_CLASSIFIER
from benchmarks.registry import get_preset
from judges import configuration
from judges.backends import ChatRequest, JudgeSpec
from judges.backends.local_transformers import TransformersBackend, loaded_models
from judges.models import JudgeItemResult, JudgeOutput
from judges.registry import backend_for

from .helpers import project_with_demo
from .test_judge_runs import run_all, start
from .tiny_vlm import IMAGE_SIZE, PATCH, make_tiny_vlm

TOKENS_PER_IMAGE = (IMAGE_SIZE // PATCH) ** 2


@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory):
    return str(make_tiny_vlm(tmp_path_factory.mktemp("tiny-llava")))


@pytest.fixture
def images(tmp_path):
    out = []
    for i, (color, size) in enumerate(
        [((220, 30, 30), (40, 30)), ((30, 30, 220), (24, 24)), ((30, 200, 30), (64, 48)), ((240, 240, 240), (20, 36))]
    ):
        path = tmp_path / f"img{i}.png"
        Image.new("RGB", size, color).save(path)
        out.append(path)
    return out


def spec(model: str, **params) -> JudgeSpec:
    p = get_preset("counterfactuals.audit")
    return JudgeSpec(
        backend="transformers",
        model_id=model,
        prompt_template=COUNTERFACTUALS_CLASSIFIER,
        parser="choice",
        questions=("flags",),
        params={"max_new_tokens": 5, **params},
        rubric=Rubric.from_schema(p.rubric),
        item_fields=p.item_fields,
        preset_key=p.key,
    )


def test_image_text_model_loads_through_auto_classes_on_cpu(tiny_vlm):
    backend = backend_for(spec(tiny_vlm))
    assert isinstance(backend, TransformersBackend)
    assert backend.kind == "image-text"  # the preset has image fields
    assert (backend.device, backend.dtype) == ("cpu", "float32")
    assert type(backend.model).__name__ == "LlavaForConditionalGeneration"
    assert type(backend.processor).__name__ == "LlavaProcessor"
    assert backend.tokenizer.padding_side == "left"


def test_batched_vlm_generation_with_left_padding_equals_one_by_one(tiny_vlm, images):
    backend = backend_for(spec(tiny_vlm, batch_size=4))
    requests = [
        ChatRequest(system="", user="what is depicted", images=[images[0]]),
        ChatRequest(
            system="the story",
            user="what is depicted in this image ? Mosque India Brazil",
            images=[images[1], images[2]],
        ),
        ChatRequest(system="", user="a", images=[images[3], images[0], images[2]]),
        ChatRequest(system="score", user="is this a temple or a church ?", images=[images[2]]),
    ]
    enc = backend._inputs(requests)
    assert enc["pixel_values"].shape[0] == 7  # every image of the batch, in order
    assert tuple(enc["pixel_values"].shape[1:]) == (3, IMAGE_SIZE, IMAGE_SIZE)
    mask = enc["attention_mask"].tolist()
    assert len({sum(row) for row in mask}) > 1  # different lengths, so padded
    assert all(row[-1] == 1 for row in mask) and any(row[0] == 0 for row in mask)  # padding on the left
    image_id = backend.model.config.image_token_index
    per_row = (enc["input_ids"] == image_id).sum(dim=1).tolist()
    assert per_row == [n * TOKENS_PER_IMAGE for n in (1, 2, 3, 1)]

    replies = backend.generate(requests)
    assert all(r.error == "" and isinstance(r.text, str) for r in replies)
    one = backend_for(spec(tiny_vlm, batch_size=1))
    assert [r.text for r in replies] == [one.generate([r])[0].text for r in requests]
    # loaded once per process: both backends share the model
    assert sum(1 for k in loaded_models() if k[0] == tiny_vlm) == 1


def test_the_images_reach_the_model(tiny_vlm, images):
    import torch

    backend = backend_for(spec(tiny_vlm))
    red = backend._inputs([ChatRequest(system="", user="what is depicted", images=[images[0]])])
    blue = backend._inputs([ChatRequest(system="", user="what is depicted", images=[images[1]])])
    assert torch.equal(red["input_ids"], blue["input_ids"])
    with torch.inference_mode():
        a = backend.model(**red).logits[0, -1]
        b = backend.model(**blue).logits[0, -1]
    assert not torch.allclose(a, b)


@pytest.mark.django_db
def test_a_vlm_judge_run_over_counterfactual_items_uses_their_asset_images(
    researcher, tmp_path, tiny_vlm, django_capture_on_commit_callbacks, monkeypatch
):
    project = project_with_demo("counterfactuals.audit", researcher, tmp_path)
    seen: list[list[str]] = []
    real = TransformersBackend.generate_batch

    def spy(self, batch):
        seen.extend([str(p) for p in r.images] for r in batch)
        return real(self, batch)

    monkeypatch.setattr(TransformersBackend, "generate_batch", spy)
    config = configuration.create_judge_config(
        project=project,
        name="tiny-vl",
        backend="transformers",
        model_id=tiny_vlm,
        params={"max_new_tokens": 4, "batch_size": 8},
    )
    assert config.questions == ["flags"] and config.parser == "choice"
    run = start(config, django_capture_on_commit_callbacks)
    assert run.queue == "gpu"
    run = run_all(run)
    items = list(project.items.order_by("id"))
    assert run.status in ("done", "failed"), run.message
    assert len(seen) == 5 * len(items)  # five Table 3 classifiers per item, one image each
    files = {
        str(media_path(a.relative_path()))
        for a in Asset.objects.filter(
            sha256__in=[it.data[f] for it in items for f in ("context_image", "counterfactual_image")]
        )
    }
    assert all(len(imgs) == 1 and imgs[0] in files for imgs in seen)
    outputs = list(JudgeOutput.objects.filter(run=run))
    assert len(outputs) == len(items) and JudgeItemResult.objects.filter(run=run).count() == len(items)
    for o in outputs:
        assert o.raw_output.startswith("[source_context] ")
        # whatever the random model said is kept; flags only where every classifier answered in the list
        assert (
            o.parsed is not None and set(o.labels) == {c["id"] for c in COUNTERFACTUALS_CLASSIFIER["classifiers"]}
        ) or o.error.startswith("parse failed")
