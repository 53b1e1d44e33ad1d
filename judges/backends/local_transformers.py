"""Local transformers judge for GPU workers (queue ``gpu``), with a CPU fallback.

- ``params.kind``: ``causal`` (text-only, AutoModelForCausalLM + AutoTokenizer) or
  ``image-text`` (AutoModelForImageTextToText + AutoProcessor); default: ``image-text`` when
  the judged items have image fields, else ``causal``.
- The model is loaded once per worker process (module-level cache keyed by path, kind,
  device and dtype) through ``from_pretrained``; ``model_id`` is a local folder or a hub id
  (offline machines: a folder).
- Batched generation with left padding (``params.batch_size``, default 8), greedy unless
  ``params.do_sample``; ``max_new_tokens`` (default 64).
- bf16 on CUDA, fp32 on CPU (``params.device`` / ``params.dtype`` override)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from .base import BackendUnavailable, ChatReply, ChatRequest, GenerativeBackend

_LOADED: dict[tuple[str, str, str, str], tuple[Any, Any]] = {}
_LOAD_LOCK = threading.Lock()
_GENERATE_LOCK = threading.Lock()  # one generate() at a time per process (one GPU per worker)


def _torch():
    try:
        import torch
    except ImportError as exc:
        raise BackendUnavailable(f"the transformers judge needs torch ({exc})") from None
    return torch


def resolve_device(params) -> tuple[str, str]:
    torch = _torch()
    device = str(params.get("device") or ("cuda" if torch.cuda.is_available() else "cpu"))
    dtype = str(params.get("dtype") or ("bfloat16" if device.startswith("cuda") else "float32"))
    return device, dtype


def load_model(model_id: str, kind: str, device: str, dtype: str) -> tuple[Any, Any]:
    """(model, tokenizer or processor), loaded once per process."""
    key = (model_id, kind, device, dtype)
    with _LOAD_LOCK:
        if key in _LOADED:
            return _LOADED[key]
        torch = _torch()
        try:
            import transformers
        except ImportError as exc:
            raise BackendUnavailable(f"the transformers judge needs transformers ({exc})") from None
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
        _LOADED[key] = (model, processor)
        return model, processor


def loaded_models() -> list[tuple[str, str, str, str]]:
    return list(_LOADED)


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
        self.batch_size = max(1, int(p.get("batch_size", 8)))
        self.max_new_tokens = int(p.get("max_new_tokens", 64))
        self.min_new_tokens = int(p["min_new_tokens"]) if p.get("min_new_tokens") else None
        self.do_sample = bool(p.get("do_sample", False))
        self.temperature = float(p.get("temperature", 1.0))
        self.model, self.processor = load_model(spec.model_id, self.kind, self.device, self.dtype)

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
                content = [{"type": "image", "image": Image.open(p).convert("RGB")} for p in req.images]
                content.append({"type": "text", "text": req.user})
                msgs = [{"role": "system", "content": [{"type": "text", "text": req.system}]}] if req.system else []
                conversations.append([*msgs, {"role": "user", "content": content}])
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

    def generate_batch(self, batch: Sequence[ChatRequest]) -> list[str]:
        torch = _torch()
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
        with _GENERATE_LOCK, torch.inference_mode():
            out = self.model.generate(**inputs, **kwargs)
        new_tokens = out[:, inputs["input_ids"].shape[1] :]
        return self.tokenizer.batch_decode(new_tokens, skip_special_tokens=True)

    def generate(self, requests: Sequence[ChatRequest]) -> list[ChatReply]:
        replies: list[ChatReply] = []
        for start in range(0, len(requests), self.batch_size):
            batch = requests[start : start + self.batch_size]
            t0 = time.perf_counter()
            try:
                texts = self.generate_batch(batch)
            except BackendUnavailable:
                raise
            except RuntimeError as exc:  # e.g. CUDA out of memory: these items fail, the run goes on
                replies.extend(ChatReply(None, f"generation failed: {exc}") for _ in batch)
                continue
            ms = int((time.perf_counter() - t0) * 1000 / len(batch))
            replies.extend(ChatReply(t, "", ms) for t in texts)
        return replies
