"""The transformers backend's batching (issue 13, point 4) on CPU with the tiny random model:
requests sorted by prompt length into batches sized to a token budget, an out-of-memory batch
split in half (and the budget lowered), replies in the order asked and equal to one-by-one
generation, and token counts from the tokenizer."""

import pytest

from judges.backends import ChatRequest, JudgeSpec
from judges.backends import local_transformers as lt
from judges.backends.base import BackendUnavailable, ChatReply, Usage, pass_usage
from judges.registry import backend_for

from .test_transformers_backend import spec as story_spec
from .tiny_model import make_tiny_causal_lm

WORDS = ["the", "story", "value", "is", "consistent", "natural", "score", "a"]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return str(make_tiny_causal_lm(tmp_path_factory.mktemp("tiny-llama-batching")))


@pytest.fixture(autouse=True)
def forget_learnt_budgets():
    lt._LEARNT_BUDGET.clear()
    yield
    lt._LEARNT_BUDGET.clear()


def spec(model: str, **params) -> JudgeSpec:
    """The CQ-Bench story judge spec of the transformers backend tests, five new tokens."""
    return story_spec(model, **{"max_new_tokens": 5, **params})


def requests(n: int) -> list[ChatRequest]:
    # lengths vary and are not in order: 3, 17, 8, 12, 1, ... words
    return [
        ChatRequest(system="", user=" ".join(WORDS[(i + j) % len(WORDS)] for j in range(1 + (i * 7) % 19)), images=[])
        for i in range(n)
    ]


def spy_batches(monkeypatch) -> list[list[str]]:
    seen: list[list[str]] = []
    real = lt.TransformersBackend.generate_batch

    def spy(self, batch):
        seen.append([r.user for r in batch])
        return real(self, batch)

    monkeypatch.setattr(lt.TransformersBackend, "generate_batch", spy)
    return seen


def test_plan_batches_sorts_longest_first_within_rows_and_tokens():
    lengths = [3, 17, 8, 12, 1, 8]
    batches = lt.plan_batches(lengths, rows=3, tokens=60, new_tokens=3)
    assert sorted(i for b in batches for i in b) == list(range(6))  # every request once
    flat = [lengths[i] for b in batches for i in b]
    assert flat == sorted(lengths, reverse=True)
    assert [i for b in batches for i in b] == [1, 3, 2, 5, 0, 4]  # equal lengths keep the order asked
    for b in batches:
        assert len(b) <= 3
        assert len(b) == 1 or len(b) * (lengths[b[0]] + 3) <= 60
    # 17 + 3 = 20 tokens a row: three fit in 60; no token limit: only the rows count
    assert batches[0] == [1, 3, 2]
    assert lt.plan_batches(lengths, rows=4, tokens=None, new_tokens=3) == [[1, 3, 2, 5], [0, 4]]
    # a request longer than the whole budget is still tried, alone
    assert lt.plan_batches([50, 2], rows=8, tokens=10, new_tokens=1) == [[0], [1]]
    assert lt.plan_batches([], rows=8, tokens=10, new_tokens=1) == []


def test_sorted_batches_sized_to_a_token_budget_keep_the_order_and_the_answers(tiny_model, monkeypatch):
    reqs = requests(10)
    one_by_one = [backend_for(spec(tiny_model, batch_size=1)).generate([r])[0] for r in reqs]
    backend = backend_for(spec(tiny_model, batch_size=4, max_batch_tokens=60))
    assert backend.max_batch_tokens == 60
    lengths = backend.prompt_lengths(reqs)
    seen = spy_batches(monkeypatch)
    replies = backend.generate(reqs)
    assert [r.text for r in replies] == [r.text for r in one_by_one]  # the order asked, the same answers
    assert all(r.error == "" for r in replies)
    by_text = {r.user: n for r, n in zip(reqs, lengths, strict=True)}
    widths = [[by_text[u] for u in batch] for batch in seen]
    assert [w for batch in widths for w in batch] == sorted(lengths, reverse=True)  # longest first
    assert len(seen) > 10 // 4  # the budget, not only the rows, cut batches
    for batch in widths:
        assert len(batch) <= 4 and (len(batch) == 1 or len(batch) * (batch[0] + 5) <= 60)


def test_token_counts_come_from_the_tokenizer(tiny_model):
    backend = backend_for(spec(tiny_model, batch_size=8, max_new_tokens=6, min_new_tokens=6))
    reqs = requests(5)
    replies = backend.generate(reqs)
    # prompt tokens without the left padding of the batch; the forced six new tokens each
    assert [r.usage.prompt_tokens for r in replies] == backend.prompt_lengths(reqs)
    assert [r.usage.prompt_tokens for r in replies] == [
        len(backend.tokenizer(backend._text(r))["input_ids"]) for r in reqs
    ]
    assert all(r.usage.completion_tokens == 6 for r in replies)
    assert len(set(backend.prompt_lengths(reqs))) > 1


def test_completion_length_stops_at_the_first_end_of_sequence():
    assert lt.completion_lengths([[5, 6, 2, 2, 2], [5, 6, 7, 8, 9], [2, 0, 0]], {2}) == [3, 5, 1]
    assert lt.completion_lengths([[5, 3, 9]], {3, 9}) == [2]


def test_an_out_of_memory_batch_is_split_and_the_budget_learnt(tiny_model, monkeypatch):
    import torch

    reqs = requests(8)
    expected = [r.text for r in backend_for(spec(tiny_model, batch_size=8)).generate(reqs)]
    real = lt.TransformersBackend.generate_batch
    sizes: list[int] = []

    def small_memory(self, batch):
        sizes.append(len(batch))
        if len(batch) > 2:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(self, batch)

    monkeypatch.setattr(lt.TransformersBackend, "generate_batch", small_memory)
    backend = backend_for(spec(tiny_model, batch_size=8))
    assert backend.max_batch_tokens is None  # CPU without a budget: rows only
    replies = backend.generate(reqs)
    assert [r.text for r in replies] == expected and all(not r.error for r in replies)
    assert sizes[:3] == [8, 4, 2]  # halved until it fits
    learnt = backend.max_batch_tokens
    assert learnt is not None and lt._LEARNT_BUDGET[backend.key] == learnt
    # the next backend of this model (the next chunk) starts from the learnt budget
    again = backend_for(spec(tiny_model, batch_size=8))
    assert again.max_batch_tokens == learnt
    sizes.clear()
    assert [r.text for r in again.generate(reqs)] == expected
    assert max(sizes) < 8


def test_a_single_request_that_does_not_fit_fails_alone(tiny_model, monkeypatch):
    import torch

    reqs = requests(6)
    longest = max(reqs, key=lambda r: len(r.user.split())).user
    real = lt.TransformersBackend.generate_batch

    def no_room_for_the_longest(self, batch):
        if any(r.user == longest for r in batch):
            raise torch.OutOfMemoryError("CUDA out of memory")
        return real(self, batch)

    monkeypatch.setattr(lt.TransformersBackend, "generate_batch", no_room_for_the_longest)
    replies = backend_for(spec(tiny_model, batch_size=6)).generate(reqs)
    failed = [r for r, q in zip(replies, reqs, strict=True) if q.user == longest]
    assert [r.error for r in failed] == ["generation failed: CUDA out of memory"]
    assert all(r.error == "" and r.text is not None for r, q in zip(replies, reqs, strict=True) if q.user != longest)


def test_other_generation_errors_fail_the_batch_without_splitting(tiny_model, monkeypatch):
    calls: list[int] = []

    def broken(self, batch):
        calls.append(len(batch))
        raise RuntimeError("device-side assert triggered")

    monkeypatch.setattr(lt.TransformersBackend, "generate_batch", broken)
    replies = backend_for(spec(tiny_model, batch_size=4)).generate(requests(4))
    assert calls == [4] and all(r.error == "generation failed: device-side assert triggered" for r in replies)


def test_a_bad_token_budget_is_refused(tiny_model):
    for bad in (0, -5, "many", 2.5, True):
        with pytest.raises(BackendUnavailable, match="max_batch_tokens"):
            backend_for(spec(tiny_model, max_batch_tokens=bad))


def test_memory_per_token_of_a_llama_config():
    from transformers import LlamaConfig

    # a 1B-class Llama: 16 layers, 8 KV heads of 64, hidden 2048, MLP 8192, bf16
    config = LlamaConfig(
        hidden_size=2048,
        intermediate_size=8192,
        num_hidden_layers=16,
        num_attention_heads=32,
        num_key_value_heads=8,
    )
    kv = 2 * 16 * 8 * 64
    assert lt.bytes_per_token(config, 2) == (kv + 4 * 2048 + 2 * 8192) * 2
    # 80 KiB a token: 40 GiB free at the default fraction 0.6 hold 314,572 tokens, e.g. 307 rows of
    # 1,024 (prompt + new tokens)
    assert int(40 * 2**30 * 0.6) // lt.bytes_per_token(config, 2) == 314_572


def test_pass_usage_sums_replies_and_never_guesses():
    a, b = ChatReply("x", usage=Usage(10, 2)), ChatReply("y", usage=Usage(5, 1))
    assert pass_usage([a, b]) == Usage(15, 3)
    assert pass_usage([a, ChatReply("z")]) is None  # an answer without a count: no partial sum
    assert pass_usage([a, ChatReply(None, "HTTP 500 Internal Server Error")]) == Usage(10, 2)
    assert pass_usage([ChatReply(None, "timed out")]) is None
