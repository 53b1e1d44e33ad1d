"""Local transformers judge for GPU workers (queue ``gpu``), with a CPU fallback.

- ``params.kind``: ``causal`` (text-only, AutoModelForCausalLM + AutoTokenizer) or
  ``image-text`` (AutoModelForImageTextToText + AutoProcessor); default: ``image-text`` when
  the judged items have image fields, else ``causal``.
- The model is loaded once per worker process (module-level cache keyed by path, kind,
  device and dtype) through ``from_pretrained``; ``model_id`` is a local folder or a hub id
  (offline machines: a folder).
- Batched generation with left padding, greedy unless ``params.do_sample``; ``max_new_tokens``
  (default 64). Requests are sorted by prompt length (longest first) and cut into batches of
  similar length, so little of a batch is padding; replies come back in the order asked.
- Batches are sized to memory: at most ``params.batch_size`` rows (default 64 on CUDA, 8 on CPU)
  and at most ``params.max_batch_tokens`` tokens, counted as rows x (longest prompt +
  ``max_new_tokens``). On CUDA that budget defaults to what ``params.memory_fraction`` (default
  0.6) of the free memory holds at the KV cache plus activations per token of this model
  (:func:`bytes_per_token`). A batch that still runs out of memory is split in half and retried,
  and the budget of this model in this process shrinks to half of it; a single request that does
  not fit fails alone, with the reason.
- Tokens are counted from the tokenizer: prompt tokens without padding, completion tokens up to
  and including the first end-of-sequence token (``ChatReply.usage``).
- bf16 on CUDA, fp32 on CPU (``params.device`` / ``params.dtype`` override).
- KV cache (issue 28): ``params.cache`` is ``static`` by default on CUDA, ``dynamic`` on CPU. On a
  GPU, decoding a small batch is bound by kernel launches, not by memory bandwidth: a dynamic cache
  grows by concatenation every step and cannot be captured in a CUDA graph. The static cache is
  allocated once per shape, rows x (longest prompt + ``max_new_tokens``) rounded up to
  :data:`STATIC_ALIGN` tokens, and batches are planned with that rounded width, so it stays within
  the token budget above. It is kept for the next batch of the same shape (reset, not
  reallocated), so its addresses stay put for the graphs. With ``params.compile`` (default on, with
  the static cache, on CUDA only) transformers compiles the decode step with
  ``torch.compile(mode="reduce-overhead")`` (CUDA graphs), and the rows of a batch are padded to a
  power of two (copies of its last request, dropped after) so only a few shapes are ever compiled.
  Greedy outputs equal the dynamic cache's (``tests/judges/test_static_cache.py`` runs the same
  path on CPU, ``params.cache = static``). A vision-language model uses the static cache for its
  text decoder whenever transformers can build one for its config (LLaVA, Qwen2-VL and the other
  decoder-only VLMs); a model class that keeps its own cache (Mamba-style state, encoder-decoder)
  falls back to the dynamic cache, and :attr:`TransformersBackend.cache_note` says why.

At scale, a serving engine (vLLM in ``docker-compose.yml``, through the OpenAI-compatible backend)
batches continuously and runs near the card's memory bandwidth; this backend is the in-process
fallback for machines without one."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from django.utils.translation import gettext_lazy

from .. import params as judge_params
from .base import (
    MODEL_EXTRA,
    PROMPTED,
    BackendEntry,
    BackendUnavailable,
    ChatReply,
    ChatRequest,
    GenerativeBackend,
    Usage,
)
from .model_cache import ModelCache

_MODELS: ModelCache[tuple[str, str, str, str], tuple[Any, Any]] = ModelCache()
_GENERATE_LOCK = threading.Lock()  # one generate() at a time per process (one GPU per worker)
# token budgets learnt from out-of-memory errors, per loaded model: a backend is built per chunk,
# and the next chunk should not run out of memory the same way again
_LEARNT_BUDGET: dict[tuple[str, str, str, str], int] = {}
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8}
CACHES = ("static", "dynamic")
# a static cache's length is rounded up to this many tokens: prompts of similar length then share
# one cache and one compiled decode graph instead of one per exact length
STATIC_ALIGN = 64
# per loaded model, the static KV cache of its last batch: (rows, length) and the cache. Kept so
# the next batch of that shape reuses its memory and addresses (CUDA graphs replay on them);
# replaced, not added to, when the shape changes, so one cache per model is ever held.
_STATIC_CACHES: dict[tuple[str, str, str, str], tuple[tuple[int, int], Any]] = {}


def _torch():
    try:
        import torch
    except ImportError as exc:
        raise BackendUnavailable(f"the transformers judge needs torch ({exc}); {MODEL_EXTRA}") from None
    return torch


def resolve_device(params) -> tuple[str, str]:
    torch = _torch()
    device = str(params.get("device") or ("cuda" if torch.cuda.is_available() else "cpu"))
    dtype = str(params.get("dtype") or ("bfloat16" if device.startswith("cuda") else "float32"))
    return device, dtype


def load_model(model_id: str, kind: str, device: str, dtype: str) -> tuple[Any, Any]:
    """(model, tokenizer or processor), loaded once per process."""
    key = (model_id, kind, device, dtype)

    def load() -> tuple[Any, Any]:
        torch = _torch()
        try:
            import transformers
        except ImportError as exc:
            raise BackendUnavailable(f"the transformers judge needs transformers ({exc}); {MODEL_EXTRA}") from None
        torch_dtype = getattr(torch, dtype)
        try:
            if kind == "image-text":
                processor = transformers.AutoProcessor.from_pretrained(model_id)
                model = transformers.AutoModelForImageTextToText.from_pretrained(model_id, dtype=torch_dtype)
                tok = getattr(processor, "tokenizer", processor)
            else:
                processor = transformers.AutoTokenizer.from_pretrained(model_id)
                model = transformers.AutoModelForCausalLM.from_pretrained(model_id, dtype=torch_dtype)
                tok = processor
        except (OSError, ValueError) as exc:
            raise BackendUnavailable(f"cannot load model {model_id!r}: {exc}") from None
        tok.padding_side = "left"  # decoder-only batching: pad on the left, generate on the right
        if tok.pad_token is None:
            tok.pad_token = tok.eos_token
        model.to(device).eval()
        return (model, processor)

    return _MODELS.get(key, load)


def user_content(req: ChatRequest, open_image: Any) -> list[dict[str, Any]]:
    """The user turn of a vision-language chat template: the images first, each named one
    preceded by its label as text ("Image A:", ``ChatRequest.image_labels``), then the prompt."""
    content: list[dict[str, Any]] = []
    for label, path in req.labelled_images():
        if label:
            content.append({"type": "text", "text": f"{label}:"})
        content.append({"type": "image", "image": open_image(path).convert("RGB")})
    content.append({"type": "text", "text": req.user})
    return content


def loaded_models() -> list[tuple[str, str, str, str]]:
    return _MODELS.keys()


# ------------------------------------------------------------------------------ batch sizing
def bytes_per_token(config: Any, dtype_bytes: int) -> int:
    """Memory one token of a batch needs while it generates: its KV cache in every layer
    (2 x KV heads x head size) plus the activations of one layer (hidden and MLP, transient).
    An estimate: the out-of-memory split in :meth:`TransformersBackend.generate` covers the rest."""
    text = config.get_text_config() if hasattr(config, "get_text_config") else config  # a VLM nests its LM
    hidden = int(getattr(text, "hidden_size", 0) or 0)
    heads = int(getattr(text, "num_attention_heads", 0) or 1)
    kv_heads = int(getattr(text, "num_key_value_heads", 0) or heads)
    head_dim = int(getattr(text, "head_dim", 0) or hidden // heads)
    layers = int(getattr(text, "num_hidden_layers", 0) or 0)
    intermediate = int(getattr(text, "intermediate_size", 0) or 4 * hidden)
    kv = 2 * layers * kv_heads * head_dim
    activations = 4 * hidden + 2 * intermediate
    return max(1, (kv + activations) * dtype_bytes)


def aligned(n: int, align: int) -> int:
    """``n`` rounded up to a multiple of ``align`` (at least ``align``)."""
    return max(align, -(-n // align) * align)


def padded_rows(rows: int, ceiling: int) -> int:
    """The rows a compiled batch runs with: ``rows`` rounded up to a power of two, at most
    ``ceiling`` (and never fewer than ``rows``), so a run compiles a handful of batch shapes."""
    p = 1
    while p < rows:
        p *= 2
    return max(rows, min(p, ceiling))


def next_batch(
    order: Sequence[int],
    lengths: Sequence[int],
    *,
    rows: int,
    tokens: int | None,
    new_tokens: int,
    align: int = 1,
) -> int:
    """How many requests from the front of ``order`` (sorted longest first) make the next batch:
    at most ``rows``, and rows x (the first's length + ``new_tokens``, rounded up to ``align``: the
    length of a static cache) within ``tokens`` (None: no token limit). Always at least one: a
    request too long for the budget is tried alone."""
    if not order:
        return 0
    width = aligned(lengths[order[0]] + new_tokens, align)
    fit = rows if tokens is None else min(rows, tokens // width)
    return max(1, min(len(order), fit))


def plan_batches(
    lengths: Sequence[int], *, rows: int, tokens: int | None, new_tokens: int, align: int = 1
) -> list[list[int]]:
    """The request indices of every batch, longest prompts first (ties in the order asked)."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    batches = []
    while order:
        n = next_batch(order, lengths, rows=rows, tokens=tokens, new_tokens=new_tokens, align=align)
        batches.append(order[:n])
        order = order[n:]
    return batches


def completion_lengths(rows: Sequence[Sequence[int]], eos_ids: set[int]) -> list[int]:
    """Generated tokens per row up to and including its first end-of-sequence token; what
    follows is padding of a batch whose other rows went on."""
    out = []
    for row in rows:
        n = len(row)
        for pos, token in enumerate(row):
            if token in eos_ids:
                n = pos + 1
                break
        out.append(n)
    return out


def static_cache_support(model: Any) -> str:
    """Why ``model`` cannot decode with a static KV cache ("" when it can): transformers builds one
    for the text decoder of any decoder-only model whose layer types it knows (a VLM's language
    model included); models that keep their own cache or an encoder's do not qualify."""
    config = model.config
    if getattr(config, "is_encoder_decoder", False):
        return f"{type(model).__name__} is an encoder-decoder model"
    supports = getattr(type(model), "_supports_default_dynamic_cache", None)
    if supports is not None and not supports():
        return f"{type(model).__name__} keeps its own cache"
    try:
        from transformers import StaticCache

        StaticCache(config=config, max_cache_len=1)  # unknown layer types (linear attention ...) refuse here
    except (ImportError, KeyError, ValueError, TypeError, NotImplementedError) as exc:
        return f"transformers has no static cache for {type(model).__name__}: {exc}"
    return ""


def held_static_cache_bytes(key: tuple[str, str, str, str]) -> int:
    """Memory of the static cache kept for the model under ``key`` (0 when none): free to the next
    batch of that model, which reuses or replaces it."""
    held = _STATIC_CACHES.get(key)
    if held is None:
        return 0
    total = 0
    for layer in getattr(held[1], "layers", ()):
        for name in ("keys", "values"):
            t = getattr(layer, name, None)
            if t is not None and hasattr(t, "numel"):
                total += t.numel() * t.element_size()
    return total


def is_out_of_memory(exc: BaseException) -> bool:
    torch = _torch()
    oom = getattr(torch, "OutOfMemoryError", None)
    text = str(exc).lower()
    return (oom is not None and isinstance(exc, oom)) or "out of memory" in text or "can't allocate memory" in text


class TransformersBackend(GenerativeBackend):
    queue = "gpu"

    def __init__(self, spec) -> None:
        super().__init__(spec)
        if not spec.model_id:
            raise BackendUnavailable("the transformers judge needs a model id (a local folder or hub id)")
        p = spec.params
        self.kind = str(p.get("kind") or ("image-text" if spec.image_fields() else "causal"))
        if self.kind not in ("causal", "image-text"):
            raise BackendUnavailable(f"params.kind must be causal or image-text, not {self.kind!r}")
        self.device, self.dtype = resolve_device(p)
        self.batch_size = max(1, int(p.get("batch_size", 64 if self.device.startswith("cuda") else 8)))
        self.max_new_tokens = int(p.get("max_new_tokens", 64))
        self.min_new_tokens = int(p["min_new_tokens"]) if p.get("min_new_tokens") else None
        self.do_sample = bool(p.get("do_sample", False))
        self.temperature = float(p.get("temperature", 1.0))
        self.model, self.processor = load_model(spec.model_id, self.kind, self.device, self.dtype)
        self.key = (spec.model_id, self.kind, self.device, self.dtype)
        self._cache_params(p)
        self.max_batch_tokens = self._token_budget(p)

    def _cache_params(self, p) -> None:
        """``self.cache`` (static or dynamic), ``self.compile`` and ``self.cache_note`` (why a static
        cache asked for is not used). The static cache is the CUDA default: there decoding is bound
        by kernel launches, which it (and the CUDA graphs it allows) removes; on CPU it buys
        nothing, and is used when asked for (the tests run the CUDA code path on CPU that way)."""
        cuda = self.device.startswith("cuda")
        self.cache = str(p.get("cache") or ("static" if cuda else "dynamic"))
        if self.cache not in CACHES:
            raise BackendUnavailable(f"params.cache must be static or dynamic, not {self.cache!r}")
        self.cache_note = ""
        if self.cache == "static":
            self.cache_note = static_cache_support(self.model)
            if self.cache_note:
                self.cache = "dynamic"
        # compiling is CUDA-only: on CPU inductor needs a C compiler and takes minutes for no gain
        self.compile = (
            bool(p.get("compile", True))
            and cuda
            and self.cache == "static"
            and bool(getattr(self.model, "_can_compile_fullgraph", False))
        )
        self.pad_rows = self.compile  # compiled graphs are per batch shape: few shapes, few graphs
        self.align = STATIC_ALIGN if self.cache == "static" else 1

    def _token_budget(self, p) -> int | None:
        """Tokens one batch may hold (rows x (longest prompt + new tokens)); None: no limit but
        the rows (CPU without ``params.max_batch_tokens``)."""
        learnt = _LEARNT_BUDGET.get(self.key)
        if p.get("max_batch_tokens") is not None:
            given = p["max_batch_tokens"]
            if isinstance(given, bool) or not isinstance(given, int) or given < 1:
                raise BackendUnavailable("params.max_batch_tokens must be a whole number of tokens >= 1")
            return min(given, learnt) if learnt else given
        if not self.device.startswith("cuda"):
            return learnt
        fraction = float(p.get("memory_fraction", 0.6))
        if not 0 < fraction <= 1:
            raise BackendUnavailable("params.memory_fraction must be above 0 and at most 1")
        torch = _torch()
        free, _total = torch.cuda.mem_get_info(self.device)
        # memory the caching allocator holds but no tensor uses is free for this process too, and so
        # is the static cache kept from the last batch (reused or replaced by the next)
        free += torch.cuda.memory_reserved(self.device) - torch.cuda.memory_allocated(self.device)
        free += held_static_cache_bytes(self.key)
        budget = max(1, int(free * fraction) // bytes_per_token(self.model.config, DTYPE_BYTES.get(self.dtype, 4)))
        return min(budget, learnt) if learnt else budget

    @property
    def tokenizer(self):
        return getattr(self.processor, "tokenizer", self.processor)

    def _text(self, req: ChatRequest) -> str:
        tok = self.tokenizer
        if getattr(tok, "chat_template", None):
            msgs = ([{"role": "system", "content": req.system}] if req.system else []) + [
                {"role": "user", "content": req.user}
            ]
            return tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
        return (f"{req.system}\n\n" if req.system else "") + f"{req.user}\n"

    def _inputs(self, batch: Sequence[ChatRequest]):
        if self.kind == "image-text":
            from PIL import Image

            conversations = []
            for req in batch:
                msgs = [{"role": "system", "content": [{"type": "text", "text": req.system}]}] if req.system else []
                conversations.append([*msgs, {"role": "user", "content": user_content(req, Image.open)}])
            return self.processor.apply_chat_template(
                conversations,
                add_generation_prompt=True,
                tokenize=True,
                return_dict=True,
                return_tensors="pt",
                processor_kwargs={"padding": True},
            )
        if any(req.images for req in batch) and not self.spec.params.get("ignore_images"):
            raise BackendUnavailable("a text-only (causal) model cannot see the item images; use kind image-text")
        return self.tokenizer([self._text(r) for r in batch], return_tensors="pt", padding=True)

    def prompt_lengths(self, requests: Sequence[ChatRequest]) -> list[int]:
        """Prompt tokens per request, to sort and size batches: the text as the tokenizer reads
        it, plus the processor's tokens per image where it says how many."""
        if self.kind == "image-text":
            per_image = int(getattr(self.processor, "image_seq_length", 0) or 0)
            texts = [f"{r.system}\n{r.user}" if r.system else r.user for r in requests]
            extra = [per_image * len(r.images) for r in requests]
        else:
            texts = [self._text(r) for r in requests]
            extra = [0] * len(requests)
        ids = self.tokenizer(texts)["input_ids"]
        return [len(t) + e for t, e in zip(ids, extra, strict=True)]

    @property
    def eos_ids(self) -> set[int]:
        ids: set[int] = set()
        for source in (getattr(self.model.generation_config, "eos_token_id", None), self.tokenizer.eos_token_id):
            if isinstance(source, int):
                ids.add(source)
            elif isinstance(source, (list, tuple)):
                ids.update(int(x) for x in source)
        return ids

    def static_cache(self, rows: int, length: int) -> Any:
        """A static KV cache of ``rows`` x ``length`` tokens for this model, emptied: the one kept
        from the last batch when it has that shape, else a new one (the old one dropped first, so
        two are never held). Call under ``_GENERATE_LOCK`` and ``inference_mode`` (the kept
        tensors are inference tensors, reset in place)."""
        held = _STATIC_CACHES.get(self.key)
        if held is not None and held[0] == (rows, length):
            held[1].reset()
            return held[1]
        _STATIC_CACHES.pop(self.key, None)
        del held
        from transformers import StaticCache

        cache = StaticCache(config=self.model.config, max_cache_len=length)
        _STATIC_CACHES[self.key] = ((rows, length), cache)
        return cache

    def generate_batch(self, batch: Sequence[ChatRequest]) -> list[ChatReply]:
        """One ``model.generate`` over the batch: the replies with their token counts."""
        torch = _torch()
        asked = len(batch)
        if self.pad_rows:
            # copies of the last request fill the batch to its compiled shape; rows do not interact
            rows = padded_rows(asked, self.batch_size)
            if self.max_batch_tokens is not None:
                width = aligned(max(self.prompt_lengths(batch[:1])[0], 1) + self.max_new_tokens, self.align)
                rows = max(asked, min(rows, self.max_batch_tokens // width))
            batch = [*batch, *[batch[-1]] * (rows - asked)]
        inputs = self._inputs(batch).to(self.device)
        kwargs: dict[str, Any] = {
            "max_new_tokens": self.max_new_tokens,
            "do_sample": self.do_sample,
            "pad_token_id": self.tokenizer.pad_token_id,
        }
        if self.min_new_tokens:
            kwargs["min_new_tokens"] = self.min_new_tokens
        if self.do_sample:
            kwargs["temperature"] = self.temperature
            if batch[0].seed is not None:
                torch.manual_seed(batch[0].seed)
        if self.cache == "static":
            # sized from the real inputs (a VLM's image tokens included), not the planning estimate
            length = aligned(inputs["input_ids"].shape[1] + self.max_new_tokens, self.align)
            kwargs["disable_compile"] = not self.compile
        with _GENERATE_LOCK, torch.inference_mode():
            if self.cache == "static":
                kwargs["past_key_values"] = self.static_cache(len(batch), length)
            out = self.model.generate(**inputs, **kwargs)
        new_tokens = out[:asked, inputs["input_ids"].shape[1] :]
        texts = self.tokenizer.batch_decode(new_tokens, skip_special_tokens=True)
        prompt = inputs["attention_mask"][:asked].sum(dim=1).tolist()  # left padding is not the prompt's
        completion = completion_lengths(new_tokens.tolist(), self.eos_ids)
        return [
            ChatReply(t, "", None, Usage(int(p), int(c))) for t, p, c in zip(texts, prompt, completion, strict=True)
        ]

    def generate(self, requests: Sequence[ChatRequest]) -> list[ChatReply]:
        """Replies in the order asked; generated longest prompts first, in batches sized to memory."""
        lengths = self.prompt_lengths(requests) if requests else []
        replies: list[ChatReply | None] = [None] * len(requests)
        order = sorted(range(len(requests)), key=lambda i: (-lengths[i], i))
        while order:
            # planned one batch at a time: an out-of-memory split lowers the budget of the rest
            n = next_batch(
                order,
                lengths,
                rows=self.batch_size,
                tokens=self.max_batch_tokens,
                new_tokens=self.max_new_tokens,
                align=self.align,
            )
            self._generate_into(order[:n], requests, lengths, replies)
            order = order[n:]
        return [r if r is not None else ChatReply(None, "generation failed: no reply") for r in replies]

    def _generate_into(
        self,
        idx: list[int],
        requests: Sequence[ChatRequest],
        lengths: Sequence[int],
        replies: list[ChatReply | None],
    ) -> None:
        t0 = time.perf_counter()
        try:
            out = self.generate_batch([requests[i] for i in idx])
        except BackendUnavailable:
            raise
        except RuntimeError as exc:
            if len(idx) > 1 and is_out_of_memory(exc):
                self._shrink_budget(len(idx) * aligned(lengths[idx[0]] + self.max_new_tokens, self.align))
                half = len(idx) // 2
                self._generate_into(idx[:half], requests, lengths, replies)
                self._generate_into(idx[half:], requests, lengths, replies)
                return
            # one request that does not fit, or another failure: these items fail, the run goes on
            for i in idx:
                replies[i] = ChatReply(None, f"generation failed: {exc}")
            return
        ms = int((time.perf_counter() - t0) * 1000 / len(idx))
        for i, reply in zip(idx, out, strict=True):
            replies[i] = replace(reply, latency_ms=ms)

    def _shrink_budget(self, failed_tokens: int) -> None:
        """A batch of ``failed_tokens`` ran out of memory: half of it is this model's budget from
        now on in this process (the memory it needed is not coming back by itself)."""
        budget = max(1, failed_tokens // 2)
        self.max_batch_tokens = min(self.max_batch_tokens or budget, budget)
        _LEARNT_BUDGET[self.key] = self.max_batch_tokens
        _STATIC_CACHES.pop(self.key, None)  # sized for the batch that failed: let its memory go
        if self.device.startswith("cuda"):
            _torch().cuda.empty_cache()


BACKEND = BackendEntry(
    key="transformers",
    label=gettext_lazy("Local transformers model (GPU worker)"),
    model_help=gettext_lazy("Model id: required, a local folder or a hub id (offline machines: a folder)."),
    family=PROMPTED,
    runner=TransformersBackend,
    params=judge_params.TRANSFORMERS,
)
