"""The CLIP image-image similarity judge (Cultural Counterfactuals Sec. 3.2 "CLIP Filtering") with
a tiny random CLIP built from a config, saved to a folder and loaded by ``model_id`` through the
same ``CLIPModel`` / ``AutoImageProcessor`` calls as CLIP-ViT-L/14:

- the similarity is the cosine of the two images' projected CLIP embeddings, checked against a
  hand computation through the model's own vision tower and projection; batching changes nothing;
- the paper's thresholds (0.75 to the context image, 0.85 to the person image) tick flags 6 and
  4, and only those: the rater records them as what it decides;
- a judge run on a counterfactual project stores the flags as the model rater's annotations,
  and the statistics see only those two flags for it;
- bad parameters are refused when the judge is created, unreadable images fail their item."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from agreement.selectors import ratings_frame
from annotation.models import Annotation, Rater
from annotation.rubric import Rubric
from benchmarks.registry import get_preset
from core.errors import DomainError
from judges import configuration
from judges.backends import BackendUnavailable, JudgeItem, JudgeSpec
from judges.backends.base import filter_flags, filter_thresholds
from judges.backends.clip_similarity import (
    DEFAULT_MODEL,
    FILTER_DEFAULTS,
    image_embeddings,
    load_clip,
    loaded_models,
)
from judges.models import JudgeConfig, JudgeOutput
from judges.registry import backend_for, get_backend

from .helpers import project_with_demo
from .test_judge_runs import run_all, start
from .tiny_clip import make_tiny_clip
from .tiny_model import make_tiny_causal_lm

PRESET = "counterfactuals.audit"


@pytest.fixture(scope="module")
def tiny_clip(tmp_path_factory) -> str:
    return str(make_tiny_clip(tmp_path_factory.mktemp("tiny-clip")))


def spec(model_id: str, **params) -> JudgeSpec:
    preset = get_preset(PRESET)
    return JudgeSpec(
        backend="clip_similarity",
        model_id=model_id,
        prompt_template={},
        parser="none",
        questions=("flags",),
        params={"device": "cpu", **params},
        rubric=Rubric.from_schema(preset.rubric),
        item_fields=preset.item_fields,
        preset_key=PRESET,
    )


@pytest.fixture
def triples(tmp_path) -> list[JudgeItem]:
    """Four (context, person, counterfactual) triples of random images; the person image is shared."""
    rng = np.random.default_rng(1)

    def png(name: str, shape=(40, 52)) -> Path:
        path = tmp_path / name
        Image.fromarray(rng.integers(0, 255, (*shape, 3), dtype=np.uint8)).save(path)
        return path

    person = png("person.png")
    return [
        JudgeItem(
            item_id=i,
            context={},
            images={
                "context_image": png(f"ctx{i}.png"),
                "person_image": person,
                "counterfactual_image": png(f"cf{i}.png"),
            },
        )
        for i in range(4)
    ]


def by_hand(model_id: str, a: Path, b: Path) -> float:
    """CLIP image-image similarity computed step by step with the same weights: the image
    processor, the vision tower's pooled output, the visual projection, then the cosine."""
    import torch
    from transformers import AutoImageProcessor, CLIPModel

    model = CLIPModel.from_pretrained(model_id).eval()
    processor = AutoImageProcessor.from_pretrained(model_id)
    feats = []
    for path in (a, b):
        pixels = processor(images=[Image.open(path).convert("RGB")], return_tensors="pt")["pixel_values"]
        with torch.no_grad():
            pooled = model.vision_model(pixel_values=pixels).pooler_output
            feats.append(model.visual_projection(pooled)[0].numpy().astype(np.float64))
    u, v = feats
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


def test_clip_loads_from_a_folder_by_model_id_once_per_process(tiny_clip):
    from transformers import CLIPModel

    backend = backend_for(spec(tiny_clip))
    assert backend.queue == get_backend("clip_similarity").queue == "gpu"  # as the transformers judge; CPU fallback
    model, processor = backend.model()
    assert isinstance(model, CLIPModel) and model.device.type == "cpu"
    assert load_clip(tiny_clip, "cpu", "float32") == (model, processor)
    assert sum(1 for k in loaded_models() if k[0] == tiny_clip) == 1
    # an empty model id means the paper's CLIP-ViT-L/14
    assert backend_for(spec("")).model_id == DEFAULT_MODEL == "openai/clip-vit-large-patch14"


def test_similarity_is_the_cosine_of_clip_image_embeddings(tiny_clip, triples):
    backend = backend_for(spec(tiny_clip, context_min=-1, person_min=-1))
    verdicts = backend.judge(triples, [0])
    assert [v.error for v in verdicts] == [""] * len(triples)
    for item, v in zip(triples, verdicts, strict=True):
        raw = json.loads(v.raw)
        cf = item.images["counterfactual_image"]
        assert raw["clip_context"] == pytest.approx(by_hand(tiny_clip, cf, item.images["context_image"]), abs=1e-4)
        assert raw["clip_person"] == pytest.approx(by_hand(tiny_clip, cf, item.images["person_image"]), abs=1e-4)
        assert raw["model_id"] == tiny_clip and raw["context_min"] == -1.0
        assert v.answers == {"flags": []}  # nothing is below -1
    # one forward pass per image or all at once: the same embeddings
    model, processor = backend.model()
    images = [Image.open(p).convert("RGB") for p in sorted({p for it in triples for p in it.images.values()})]
    one = image_embeddings(model, processor, images, batch_size=1)
    many = image_embeddings(model, processor, images, batch_size=16)
    assert one.shape == (len(images), 8) and np.allclose(one, many, atol=1e-5)
    assert np.allclose(np.linalg.norm(many, axis=1), 1.0, atol=1e-5)


def test_the_papers_thresholds_tick_flags_four_and_six():
    paper = filter_thresholds({}, FILTER_DEFAULTS)
    assert paper == {"person_min": 0.85, "context_min": 0.75}
    # App. A.6: Fig. 7 scored 0.622 to the context image, Fig. 8 0.716 to the person image
    assert filter_flags({"context_image": 0.622, "person_image": 0.93}, paper) == ["context_missing"]
    assert filter_flags({"context_image": 0.88, "person_image": 0.716}, paper) == ["person_missing"]
    assert filter_flags({"context_image": 0.5, "person_image": 0.5}, paper) == ["person_missing", "context_missing"]
    # "less than" the threshold: a score on it passes
    assert filter_flags({"context_image": 0.75, "person_image": 0.85}, paper) == []
    # a threshold set to null leaves its flag undecided: never ticked
    ctx_only = filter_thresholds({"person_min": None}, FILTER_DEFAULTS)
    assert filter_flags({"context_image": 0.1, "person_image": 0.1}, ctx_only) == ["context_missing"]


def test_the_judge_ticks_flags_where_its_similarities_fall_below_the_thresholds(tiny_clip, triples):
    scores = json.loads(backend_for(spec(tiny_clip, context_min=-1, person_min=-1)).judge(triples, [0])[0].raw)
    # thresholds just above / below the first item's own similarities
    above = backend_for(
        spec(tiny_clip, context_min=scores["clip_context"] + 1e-3, person_min=scores["clip_person"] - 1e-3)
    )
    assert above.judge(triples[:1], [0])[0].answers == {"flags": ["context_missing"]}
    below = backend_for(
        spec(tiny_clip, context_min=scores["clip_context"] - 1e-3, person_min=scores["clip_person"] + 1e-3)
    )
    assert below.judge(triples[:1], [0, 1])[1].answers == {"flags": ["person_missing"]}


def test_unreadable_or_missing_images_fail_their_item_only(tiny_clip, triples, tmp_path):
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not a png")
    triples[1].images["counterfactual_image"] = broken
    del triples[2].images["person_image"]
    verdicts = backend_for(spec(tiny_clip)).judge(triples, [0])
    errors = [v.error for v in verdicts]
    assert errors[0] == errors[3] == ""
    assert "cannot read image broken.png" in errors[1] and verdicts[1].answers is None
    assert errors[2] == "cannot judge this item: image(s) not available: person_image"
    # without a person threshold the person image is not needed
    verdicts = backend_for(spec(tiny_clip, person_min=None)).judge(triples[2:3], [0])
    assert verdicts[0].error == "" and "clip_person" not in json.loads(verdicts[0].raw)


def test_a_folder_that_is_no_clip_model_is_refused(tmp_path):
    lm = make_tiny_causal_lm(tmp_path / "lm")
    with pytest.raises(BackendUnavailable, match="is not a CLIP model"):
        backend_for(spec(str(lm))).model()
    with pytest.raises(BackendUnavailable, match="cannot load CLIP model"):
        backend_for(spec(str(tmp_path / "nowhere"))).model()
    with pytest.raises(BackendUnavailable, match=r"params\.batch_size"):
        backend_for(spec(str(lm), batch_size=0))


@pytest.mark.django_db
def test_a_clip_judge_run_flags_counterfactuals(researcher, tmp_path, tiny_clip, django_capture_on_commit_callbacks):
    project = project_with_demo(PRESET, researcher, tmp_path)
    # the thresholds sit inside the tiny model's own scores, so both outcomes occur
    probe = configuration.create_judge_config(
        project=project,
        name="probe",
        backend="clip_similarity",
        model_id=tiny_clip,
        params={"device": "cpu", "context_min": -1, "person_min": -1},
    )
    probe_run = run_all(start(probe, django_capture_on_commit_callbacks))
    assert probe_run.status == "done", probe_run.message
    scores = {o.item_id: json.loads(o.raw_output) for o in JudgeOutput.objects.filter(run=probe_run)}
    context_min = float(np.median([s["clip_context"] for s in scores.values()]))
    person_min = float(np.median([s["clip_person"] for s in scores.values()]))

    config = configuration.create_judge_config(
        project=project,
        name="clip",
        backend="clip_similarity",
        model_id=tiny_clip,
        params={"device": "cpu", "context_min": context_min, "person_min": person_min, "batch_size": 4},
    )
    assert config.questions == ["flags"] and config.parser == "none"
    assert config.rater.parameters["decides"] == {"flags": ["person_missing", "context_missing"]}
    run = start(config, django_capture_on_commit_callbacks)
    assert run.queue == "gpu"
    run = run_all(run)
    assert run.status == "done", run.message
    anns = {a.item_id: a for a in Annotation.objects.filter(rater=config.rater)}
    assert len(anns) == project.items.count()
    ticked = set()
    for item_id, s in scores.items():
        expected = [
            f
            for f, below in (
                ("person_missing", s["clip_person"] < person_min),
                ("context_missing", s["clip_context"] < context_min),
            )
            if below
        ]
        assert anns[item_id].answers == {"flags": expected}
        ticked.update(expected)
    assert ticked == {"person_missing", "context_missing"}

    # the statistics see the two flags the filter decides, nothing else of the checklist
    frame = ratings_frame(project)
    mine = set(frame.loc[frame.rater == config.rater.name, "field"])
    assert {f for f in mine if f.startswith("flags:")} == {"flags:person_missing", "flags:context_missing"}
    assert mine & {"flag_context_source", "flag_orientation", "any_failure", "generation_failure"} == set()
    assert {"flag_person_missing", "flag_context_missing"} <= mine


@pytest.mark.django_db
def test_clip_judge_configuration_is_checked_when_created(researcher, tmp_path):
    project = project_with_demo(PRESET, researcher, tmp_path)
    config = configuration.create_judge_config(project=project, name="clip-l14", backend="clip_similarity")
    # the paper's model and thresholds by default, recorded on the rater
    assert config.model_id == config.rater.model_id == DEFAULT_MODEL
    assert config.rater.parameters["decides"] == {"flags": ["person_missing", "context_missing"]}
    ctx_only = configuration.create_judge_config(
        project=project, name="ctx", backend="clip_similarity", params={"person_min": None}
    )
    assert ctx_only.rater.parameters["decides"] == {"flags": ["context_missing"]}
    before = (JudgeConfig.objects.count(), Rater.objects.count())
    bad = [
        ({"context_min": 1.5}, "context_min must be a number between -1 and 1"),
        ({"person_min": "high"}, "person_min must be a number"),
        ({"context_min": None, "person_min": None}, "would decide no flag"),
        ({"batch_size": 0}, "batch_size"),
        ({"device": "tpu"}, "params.device"),
        ({"dtype": "int8"}, "params.dtype"),
        ({"mode": "valueground_q3"}, "has no mode 'valueground_q3'"),
    ]
    for params, message in bad:
        with pytest.raises(DomainError, match=message):
            configuration.create_judge_config(project=project, name="bad", backend="clip_similarity", params=params)
    with pytest.raises(DomainError, match="unknown: nope"):
        configuration.create_judge_config(
            project=project, name="bad", backend="clip_similarity", questions=["flags", "nope"]
        )
    assert (JudgeConfig.objects.count(), Rater.objects.count()) == before  # nothing written
    valueground = project_with_demo("valueground.pair_quality", researcher, tmp_path)
    with pytest.raises(DomainError, match=r"no default questions for preset 'valueground\.pair_quality'"):
        configuration.create_judge_config(project=valueground, name="clip", backend="clip_similarity")
    with pytest.raises(DomainError, match=r"has no mode for preset 'valueground\.pair_quality'"):
        configuration.create_judge_config(project=valueground, name="clip", backend="clip_similarity", questions=["q3"])
