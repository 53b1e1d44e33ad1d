"""The static KV cache of the transformers backend (issue 28) on CPU, where ``params.cache =
static`` runs the code path CUDA takes by default (without the compiled decode step, which is
CUDA-only): greedy token ids equal the dynamic cache's for batches of different prompt lengths
(left padding), for a tiny random Llama and a tiny random LLaVA; the cache is kept and reset for
the next batch of the same shape and replaced (never added to) for another; rows padded to a
compiled shape change nothing; batches are planned with the cache's rounded length; a model that
cannot hold a static cache falls back to the dynamic one and says why."""

from __future__ import annotations

from typing import Any

import pytest
from PIL import Image

from benchmarks.counterfactuals import CLASSIFIER as COUNTERFACTUALS_CLASSIFIER
from judges.backends import ChatRequest, JudgeSpec
from judges.backends import local_transformers as lt
from judges.backends.base import BackendUnavailable
from judges.registry import backend_for

from .test_transformers_backend import spec as story_spec
from .tiny_model import make_tiny_causal_lm
from .tiny_vlm import make_tiny_vlm

PROMPTS = [
    "score is",
    "the story is a value",
    "a",
    "yes no yes no the value is consistent natural story",
    "value is natural",
    "the the story story is consistent",
]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> str:
    # wider than the other tests' model so that 12 greedy tokens are not all the same word
    return str(make_tiny_causal_lm(tmp_path_factory.mktemp("tiny-llama-static"), hidden=64, layers=2, seed=7))


@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory) -> str:
    return str(make_tiny_vlm(tmp_path_factory.mktemp("tiny-llava-static"), seed=7))


@pytest.fixture(autouse=True)
def forget_held_caches():
    lt._STATIC_CACHES.clear()
    yield
    lt._STATIC_CACHES.clear()


def requests(prompts: list[str]) -> list[ChatRequest]:
    return [ChatRequest(system="", user=p, images=[]) for p in prompts]


def spy_ids(monkeypatch, backend) -> list[list[list[int]]]:
    """The token ids ``model.generate`` returns, one list of rows per call (the model object is
    shared by every backend of this model in the process)."""
    seen: list[list[list[int]]] = []
    real = type(backend.model).generate

    def spy(model: Any, *args: Any, **kwargs: Any):
        out = real(model, *args, **kwargs)
        seen.append(out.tolist())
        return out

    monkeypatch.setattr(type(backend.model), "generate", spy)
    return seen


@pytest.mark.parametrize("batch_size", [1, 2, 3, 6])
def test_greedy_ids_with_the_static_cache_equal_the_dynamic_cache(tiny_model, monkeypatch, batch_size):
    static = backend_for(story_spec(tiny_model, batch_size=batch_size, max_new_tokens=12, cache="static"))
    dynamic = backend_for(story_spec(tiny_model, batch_size=batch_size, max_new_tokens=12, cache="dynamic"))
    assert (static.cache, dynamic.cache) == ("static", "dynamic")
    assert static.compile is False and static.cache_note == ""  # compiling is CUDA-only
    reqs = requests(PROMPTS)
    enc = static._inputs(reqs)
    assert len(set(enc["attention_mask"].sum(dim=1).tolist())) > 1  # different lengths, left padded

    ids = spy_ids(monkeypatch, static)
    s = static.generate(reqs)
    static_ids, ids[:] = list(ids), []
    d = dynamic.generate(reqs)
    assert static_ids == ids  # the same batches, the same token ids, padding included
    assert [r.text for r in s] == [r.text for r in d]
    assert [r.usage for r in s] == [r.usage for r in d]
    assert len({len(set(row[-12:])) for batch in ids for row in batch}) > 1  # not one repeated token


def test_the_cache_is_kept_for_the_same_shape_and_replaced_for_another(tiny_model):
    backend = backend_for(story_spec(tiny_model, batch_size=2, max_new_tokens=8, cache="static"))
    first = backend.generate(requests(PROMPTS[:2]))
    (shape, cache) = lt._STATIC_CACHES[backend.key][0], lt._STATIC_CACHES[backend.key][1]
    assert shape == (2, lt.STATIC_ALIGN)  # prompt + 8 new tokens, rounded up
    assert lt.held_static_cache_bytes(backend.key) > 0
    again = backend.generate(requests(PROMPTS[:2]))
    assert lt._STATIC_CACHES[backend.key][1] is cache  # reused, reset in between
    assert [r.text for r in again] == [r.text for r in first]
    backend.generate(requests(PROMPTS[:1]))
    assert lt._STATIC_CACHES[backend.key][0] == (1, lt.STATIC_ALIGN)
    assert len(lt._STATIC_CACHES) == 1  # one per model, whatever the shapes seen


def test_rows_padded_to_a_compiled_shape_change_no_reply(tiny_model, monkeypatch):
    plain = backend_for(story_spec(tiny_model, batch_size=8, max_new_tokens=8, cache="static"))
    expected = plain.generate(requests(PROMPTS[:3]))
    padded = backend_for(story_spec(tiny_model, batch_size=8, max_new_tokens=8, cache="static"))
    padded.pad_rows = True  # what CUDA with compile does
    ids = spy_ids(monkeypatch, padded)
    replies = padded.generate(requests(PROMPTS[:3]))
    assert [len(batch) for batch in ids] == [4]  # 3 rows run as 4
    assert [r.text for r in replies] == [r.text for r in expected]
    assert [r.usage for r in replies] == [r.usage for r in expected]


def test_padded_rows_are_a_power_of_two_within_the_ceiling():
    assert [lt.padded_rows(n, 64) for n in (1, 2, 3, 5, 17, 33, 64)] == [1, 2, 4, 8, 32, 64, 64]
    assert lt.padded_rows(20, 24) == 24 and lt.padded_rows(30, 24) == 30


def test_batches_are_planned_with_the_rounded_cache_length():
    # 10 prompts of 30 tokens + 10 new: 40 tokens a row, 64 once rounded for a static cache
    lengths = [30] * 10
    assert [len(b) for b in lt.plan_batches(lengths, rows=10, tokens=400, new_tokens=10)] == [10]
    assert [len(b) for b in lt.plan_batches(lengths, rows=10, tokens=400, new_tokens=10, align=64)] == [6, 4]
    assert lt.aligned(1, 64) == 64 and lt.aligned(64, 64) == 64 and lt.aligned(65, 64) == 128


def test_cpu_defaults_to_the_dynamic_cache_and_a_bad_cache_is_refused(tiny_model):
    backend = backend_for(story_spec(tiny_model))
    assert (backend.cache, backend.compile, backend.align) == ("dynamic", False, 1)
    with pytest.raises(BackendUnavailable, match=r"params\.cache"):
        backend_for(story_spec(tiny_model, cache="paged"))


def test_a_model_without_a_static_cache_falls_back_and_says_why(tiny_model, monkeypatch):
    from transformers import LlamaForCausalLM

    monkeypatch.setattr(LlamaForCausalLM, "_supports_default_dynamic_cache", classmethod(lambda cls: False))
    backend = backend_for(story_spec(tiny_model, cache="static"))
    assert backend.cache == "dynamic" and "keeps its own cache" in backend.cache_note
    assert backend.generate(requests(PROMPTS[:2]))[0].error == ""


# ------------------------------------------------------------------------------ vision-language
def vlm_spec(model: str, **params) -> JudgeSpec:
    from annotation.rubric import Rubric
    from benchmarks.registry import get_preset

    p = get_preset("counterfactuals.audit")
    return JudgeSpec(
        backend="transformers",
        model_id=model,
        prompt_template=COUNTERFACTUALS_CLASSIFIER,
        parser="choice",
        questions=("flags",),
        params={"max_new_tokens": 10, **params},
        rubric=Rubric.from_schema(p.rubric),
        item_fields=p.item_fields,
        preset_key=p.key,
    )


def test_vlm_greedy_ids_with_the_static_cache_equal_the_dynamic_cache(tiny_vlm, tmp_path, monkeypatch):
    images = []
    for i, (color, size) in enumerate(
        [((220, 30, 30), (40, 30)), ((30, 30, 220), (24, 24)), ((30, 200, 30), (64, 48))]
    ):
        images.append(tmp_path / f"img{i}.png")
        Image.new("RGB", size, color).save(images[-1])
    reqs = [
        ChatRequest(system="", user="what is depicted", images=[images[0]]),
        ChatRequest(system="the story", user="what is depicted in this image ? Mosque India", images=images[1:]),
        ChatRequest(system="", user="a", images=[images[2], images[0], images[1]]),
    ]
    static = backend_for(vlm_spec(tiny_vlm, batch_size=3, cache="static"))
    dynamic = backend_for(vlm_spec(tiny_vlm, batch_size=3, cache="dynamic"))
    assert static.kind == "image-text" and static.cache == "static" and static.cache_note == ""
    ids = spy_ids(monkeypatch, static)
    s = static.generate(reqs)
    static_ids, ids[:] = list(ids), []
    d = dynamic.generate(reqs)
    assert static_ids == ids
    assert [r.text for r in s] == [r.text for r in d]
    # the cache holds the image tokens too: sized from the real inputs, not the planning estimate
    rows, length = lt._STATIC_CACHES[static.key][0]
    assert rows == 3 and length >= len(ids[0][0])
