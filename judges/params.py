"""The parameters of every judge backend, declared once: name, type, default, help, choices and
range, per backend and, where a backend has modes (or AHEaD's extractors), the modes that read
each one. Each backend's registry entry (``BackendEntry.params``, ``judges/registry.py``) names
its declaration here; its ``mode`` parameter is made from the entry's modes (:func:`mode_param`),
and the functions below take the whole schema the entry builds (``BackendEntry.schema``).

One declaration serves three readers, so they cannot drift apart:

- the judge form (``judges/forms.py``) builds one field per parameter of the chosen backend;
- :func:`check` refuses a value a backend cannot use with a message per parameter, when a judge
  is created (form and API alike, ``configuration.create_judge_config``) and, for the CLIP and AHEaD
  judges, again when their backend is built on the worker (their ``check_params``);
- the judge page shows a judge's parameters as a table (:func:`describe`).

The backends keep reading their own parameters (``p.get("timeout_s", 60)`` ...); the defaults
written here are what those reads fall back to, and ``tests/judges/test_judge_params.py`` checks
that every parameter a backend reads is declared here and that the declared defaults are the ones
the backends use. A parameter that is not declared is kept as given (the API has always accepted
any object) and listed as "not read by this backend" on the judge page.

Pure: no model is loaded and no database is read; the endpoint and key-name checks are the
administrator's allow-lists (``judges.endpoints``)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.utils.text import format_lazy
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from . import endpoints
from .ahead_paper import TAU_INTERNVL3

# parameter types (how a value is checked, and which form field shows it)
INT = "int"
NUMBER = "number"
BOOL = "bool"
CHOICE = "choice"
TEXT = "text"
ENDPOINT = "endpoint"  # an OpenAI-compatible base URL the administrator allows
KEY_ENV = "key_env"  # the name of an allowed environment variable holding the API key
DEVICE = "device"  # cpu, cuda or cuda:<n>
NUMBER_PAIR = "number_pair"  # [low, high], low <= high
IMAGE_FIELDS = "image_fields"  # image fields of the preset's items
TEXT_OR_LIST = "text_or_list"  # one text or a list of texts (stop sequences)

DEVICE_PATTERN = re.compile(r"^(cpu|cuda(:\d+)?)$")
# what runs.start_judge_run uses (DEFAULT_CHUNK, MAX_CHUNK there; a test keeps them equal)
DEFAULT_CHUNK = 16
MAX_CHUNK = 1000
# Upper bounds of the OpenAI-compatible backend's retry loop (issue 37, M4): a chunk holds one of
# the shared worker's threads while it retries, so no judge may make one request take hours.
# The worst case per request is (MAX_RETRIES + 1) x timeout_s plus the back-offs between them;
# a cancel cuts the back-offs short (backends/openai_chat.py), a request in flight ends by its
# timeout. docs/judges.md, "Bounds", says the same.
MAX_TIMEOUT_S = 600  # a long generation on a busy vLLM can take minutes, never more than ten
MAX_RETRIES = 10
MAX_BACKOFF_S = 120  # first and longest retry delay, Retry-After included
MAX_CONCURRENCY = 64  # the backend's connection pool per endpoint (openai_chat._client)


@dataclass(frozen=True)
class Param:
    """One parameter of a backend.

    ``default``: what the backend uses when the parameter is not given (``None`` with
    ``default_text`` where it depends on something else, e.g. the device); ``nullable``: null
    is a value of its own (a filter threshold: leave its flag undecided, ``null_help``);
    ``modes`` / ``extractors``: only read in these modes (AHEaD: with these extractors), empty
    for all; ``advanced``: folded under "more settings" in the form."""

    name: str
    type: str
    help: str
    default: Any = None
    default_text: str = ""
    choices: tuple[str, ...] = ()
    min: float | None = None
    max: float | None = None
    min_exclusive: bool = False
    nullable: bool = False
    null_help: str = ""
    modes: tuple[str, ...] = ()
    extractors: tuple[str, ...] = ()
    advanced: bool = False

    @property
    def label(self) -> str:
        """The parameter in words, in the UI's language (the form and the judge page show it
        beside its key, which is what the JSON and the API take)."""
        return str(LABELS.get(self.name, self.name))

    def choice_label(self, value: Any) -> str:
        """One of the choices in words ("" when it has none, or for a value that is no choice)."""
        if not isinstance(value, str):
            return ""
        found = CHOICE_LABELS.get(value)
        return str(found) if found is not None and value in self.choices else ""

    def applies(self, *, mode: str = "", extractor: str = "") -> bool:
        """Read by the backend in this mode / with this extractor ("" = not known: read)."""
        return (not mode or not self.modes or mode in self.modes) and (
            not extractor or not self.extractors or extractor in self.extractors
        )

    def default_shown(self) -> str:
        """The default in words, as the form and the judge page show it."""
        if self.default_text:
            return str(self.default_text)
        if self.default is None:
            return str(self.null_help) if self.nullable and self.null_help else _("none")
        return show_value(self.default)

    def range_text(self) -> str:
        """The allowed values in words ("" when any value of the type is allowed)."""
        if self.choices:
            return _("one of %(choices)s") % {"choices": ", ".join(self.choices)}
        lo, hi = _num(self.min), _num(self.max)
        if self.min is not None and self.max is not None:
            if self.min_exclusive:
                return _("above %(min)s and at most %(max)s") % {"min": lo, "max": hi}
            return _("between %(min)s and %(max)s") % {"min": lo, "max": hi}
        if self.min is not None:
            if self.min_exclusive:
                return _("above %(min)s") % {"min": lo}
            return _("at least %(min)s") % {"min": lo}
        if self.max is not None:
            return _("at most %(max)s") % {"max": hi}
        return ""


def _num(v: float | None) -> str:
    return "" if v is None else (str(int(v)) if float(v).is_integer() else str(v))


def show_value(value: Any) -> str:
    """A parameter value as a page shows it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if isinstance(value, (list, tuple)):
        return ", ".join(show_value(v) for v in value)
    if isinstance(value, Mapping):
        return ", ".join(f"{k}: {show_value(v)}" for k, v in value.items())
    return str(value)


# ------------------------------------------------------------------------------ in words
#: each parameter in words, by its key (a key means the same in every backend that reads it)
LABELS: dict[str, Any] = {
    "chunk_size": gettext_lazy("Chunk size"),
    "batch_size": gettext_lazy("Batch size"),
    "image_fields": gettext_lazy("Image fields"),
    "base_url": gettext_lazy("Endpoint URL"),
    "api_key_env": gettext_lazy("API key variable"),
    "temperature": gettext_lazy("Temperature"),
    "max_tokens": gettext_lazy("Maximum tokens"),
    "seed": gettext_lazy("Seed"),
    "concurrency": gettext_lazy("Concurrent requests"),
    "response_format": gettext_lazy("Response format"),
    "top_p": gettext_lazy("Top-p"),
    "stop": gettext_lazy("Stop sequences"),
    "frequency_penalty": gettext_lazy("Frequency penalty"),
    "presence_penalty": gettext_lazy("Presence penalty"),
    "timeout_s": gettext_lazy("Timeout in seconds"),
    "max_retries": gettext_lazy("Retries"),
    "backoff_s": gettext_lazy("First retry delay in seconds"),
    "max_backoff_s": gettext_lazy("Longest retry delay in seconds"),
    "kind": gettext_lazy("Model kind"),
    "device": gettext_lazy("Device"),
    "dtype": gettext_lazy("Precision"),
    "max_new_tokens": gettext_lazy("Maximum new tokens"),
    "do_sample": gettext_lazy("Sampled decoding"),
    "min_new_tokens": gettext_lazy("Minimum new tokens"),
    "max_batch_tokens": gettext_lazy("Token budget per batch"),
    "memory_fraction": gettext_lazy("GPU memory share"),
    "ignore_images": gettext_lazy("Ignore images"),
    "cache": gettext_lazy("KV cache"),
    "compile": gettext_lazy("Compile into CUDA graphs"),
    "mode": gettext_lazy("Mode"),
    "reflect_tau": gettext_lazy("Reflection threshold"),
    "rewrite_step": gettext_lazy("Rewrite step"),
    "q3_thresholds": gettext_lazy("Q3 thresholds"),
    "context_min": gettext_lazy("Minimum similarity to the context image"),
    "person_min": gettext_lazy("Minimum similarity to the person image"),
    "extractor": gettext_lazy("Descriptor extractor"),
    "tau": gettext_lazy("Descriptor match threshold"),
    "ita_model": gettext_lazy("Image-text model"),
    "real_generator": gettext_lazy("Generator of the real images"),
    "exag_candidates": gettext_lazy("Stereotype candidates"),
    "encoder": gettext_lazy("Sentence encoder"),
    "encoder_device": gettext_lazy("Device of the sentence encoder"),
    "ita_device": gettext_lazy("Device of the image-text model"),
    "image_field": gettext_lazy("Image field"),
}

#: the choices of choice parameters in words, by value (the value is what the JSON takes)
CHOICE_LABELS: dict[str, Any] = {
    # response_format
    "json_schema": gettext_lazy("JSON schema"),
    "json_object": gettext_lazy("JSON object"),
    "none": gettext_lazy("unconstrained"),
    # kind
    "causal": gettext_lazy("text-only model"),
    "image-text": gettext_lazy("vision-language model"),
    # dtype
    "float32": gettext_lazy("32-bit floating point"),
    "float16": gettext_lazy("16-bit floating point"),
    "bfloat16": gettext_lazy("16-bit brain floating point"),
    "float64": gettext_lazy("64-bit floating point"),
    # cache
    "static": gettext_lazy("static"),
    "dynamic": gettext_lazy("dynamic"),
    # extractor
    "openai_chat": gettext_lazy("OpenAI-compatible endpoint"),
    "transformers": gettext_lazy("local transformers model"),
    # modes (each prompt-less backend's ``BackendEntry.modes``)
    "cqbench": gettext_lazy("CQ-Bench reflection and rewrite improvement"),
    "valueground_q3": gettext_lazy("ValueGround Q3 from the SSIM of the image pair"),
    "counterfactual_filter": gettext_lazy("Cultural Counterfactuals image filter (flags 4 and 6)"),
    "cultivate": gettext_lazy("CULTIVate faithfulness, hallucination and exaggeration"),
}


# ------------------------------------------------------------------------------ declarations
def mode_param(modes: Sequence[str]) -> Param:
    """The ``mode`` parameter of a prompt-less backend with these modes (its entry's ``modes``:
    declared once there, offered here)."""
    return Param(
        "mode",
        CHOICE,
        gettext_lazy("What the judge computes, which decides the questions it answers (see 'What it can answer')."),
        default_text=gettext_lazy("the mode the project's preset declares"),
        choices=tuple(modes),
    )


#: what each filter threshold decides (``backends.base.FILTER_FLAGS``), in the form's order
_THRESHOLD_HELP = {
    "context_min": gettext_lazy("Flag 6 context_missing when the similarity to the context image is below this."),
    "person_min": gettext_lazy("Flag 4 person_missing when the similarity to the person image is below this."),
}


def _thresholds(context_min: float | None, person_min: float | None, source: Any) -> tuple[Param, ...]:
    defaults = {"context_min": context_min, "person_min": person_min}
    return tuple(
        Param(
            key,
            NUMBER,
            format_lazy("{} {}", help_text, source),
            default=defaults[key],
            min=-1,
            max=1,
            nullable=True,
            null_help=gettext_lazy("null: the flag is not decided"),
            modes=("counterfactual_filter",),
        )
        for key, help_text in _THRESHOLD_HELP.items()
    )


# read by the services for every backend (runs) and by the judge spec (which images are sent)
COMMON: tuple[Param, ...] = (
    Param(
        "chunk_size",
        INT,
        gettext_lazy("Items per worker task of a run."),
        default=DEFAULT_CHUNK,
        min=1,
        max=MAX_CHUNK,
        advanced=True,
    ),
    Param(
        "batch_size",
        INT,
        gettext_lazy("Items judged per step of a task (a cancelled run stops between steps)."),
        default_text=gettext_lazy("the chunk size"),
        min=1,
        advanced=True,
    ),
    Param(
        "image_fields",
        IMAGE_FIELDS,
        gettext_lazy("The item images the judge is given."),
        default_text=gettext_lazy("every image field of the preset"),
        advanced=True,
    ),
)

OPENAI_CHAT: tuple[Param, ...] = (
    Param(
        "base_url",
        ENDPOINT,
        gettext_lazy(
            "The OpenAI-compatible endpoint (vLLM, TGI, llama.cpp, Ollama, a hosted API), e.g. http://host:8000/v1."
        ),
        default_text=gettext_lazy("the administrator's default endpoint (HV_JUDGE_API_BASE)"),
    ),
    Param(
        "api_key_env",
        KEY_ENV,
        gettext_lazy(
            "The environment variable holding the API key, one the administrator allows. Never the key itself."
        ),
        default=endpoints.DEFAULT_KEY_ENV,
    ),
    Param(
        "temperature",
        NUMBER,
        gettext_lazy("Sampling temperature."),
        default_text=gettext_lazy("the endpoint's default"),
        min=0,
    ),
    Param(
        "max_tokens",
        INT,
        gettext_lazy("Most tokens per reply."),
        default_text=gettext_lazy("the endpoint's default"),
        min=1,
    ),
    Param(
        "seed",
        INT,
        gettext_lazy("Seed of the first pass; pass n asks with seed + n."),
        default_text=gettext_lazy("none"),
    ),
    Param("concurrency", INT, gettext_lazy("Requests in flight at once."), default=4, min=1, max=MAX_CONCURRENCY),
    Param(
        "response_format",
        CHOICE,
        gettext_lazy("Constrained output: a request the server refuses with HTTP 400 is asked again without it."),
        default_text=gettext_lazy("json_schema for the JSON parser and label templates, else none"),
        choices=("json_schema", "json_object", "none"),
        advanced=True,
    ),
    Param(
        "top_p",
        NUMBER,
        gettext_lazy("Nucleus sampling."),
        default_text=gettext_lazy("the endpoint's default"),
        min=0,
        max=1,
        min_exclusive=True,
        advanced=True,
    ),
    Param("stop", TEXT_OR_LIST, gettext_lazy("Stop sequence(s)."), default_text=gettext_lazy("none"), advanced=True),
    Param(
        "frequency_penalty",
        NUMBER,
        gettext_lazy("Frequency penalty."),
        default_text=gettext_lazy("the endpoint's default"),
        min=-2,
        max=2,
        advanced=True,
    ),
    Param(
        "presence_penalty",
        NUMBER,
        gettext_lazy("Presence penalty."),
        default_text=gettext_lazy("the endpoint's default"),
        min=-2,
        max=2,
        advanced=True,
    ),
    Param(
        "timeout_s",
        NUMBER,
        gettext_lazy("Seconds per request."),
        default=60,
        min=0,
        max=MAX_TIMEOUT_S,
        min_exclusive=True,
        advanced=True,
    ),
    Param(
        "max_retries",
        INT,
        gettext_lazy("Retries of a 429, 5xx, timeout or dropped connection."),
        default=5,
        min=0,
        max=MAX_RETRIES,
        advanced=True,
    ),
    Param(
        "backoff_s",
        NUMBER,
        gettext_lazy("First retry delay (doubles each retry, with jitter)."),
        default=1.0,
        min=0,
        max=MAX_BACKOFF_S,
        advanced=True,
    ),
    Param(
        "max_backoff_s",
        NUMBER,
        gettext_lazy("Longest retry delay (Retry-After honoured up to it)."),
        default=30.0,
        min=0,
        max=MAX_BACKOFF_S,
        advanced=True,
    ),
)

TRANSFORMERS: tuple[Param, ...] = (
    Param(
        "kind",
        CHOICE,
        gettext_lazy("causal: a text-only model; image-text: a vision-language model."),
        default_text=gettext_lazy("image-text when the items have images, else causal"),
        choices=("causal", "image-text"),
    ),
    Param(
        "device",
        DEVICE,
        gettext_lazy("Where the model runs."),
        default_text=gettext_lazy("cuda when available, else cpu"),
    ),
    Param(
        "dtype",
        CHOICE,
        gettext_lazy("Weights' precision."),
        default_text=gettext_lazy("bfloat16 on CUDA, float32 on CPU"),
        choices=("bfloat16", "float16", "float32", "float64"),
    ),
    Param("max_new_tokens", INT, gettext_lazy("Most tokens generated per reply."), default=64, min=1),
    Param("do_sample", BOOL, gettext_lazy("Sample instead of greedy decoding."), default=False),
    Param(
        "temperature",
        NUMBER,
        gettext_lazy("Sampling temperature (with sampling only)."),
        default=1.0,
        min=0,
        min_exclusive=True,
    ),
    Param(
        "seed",
        INT,
        gettext_lazy("Seed of the first pass when sampling; pass n uses seed + n."),
        default_text=gettext_lazy("none"),
    ),
    Param(
        "batch_size",
        INT,
        gettext_lazy("Most prompts per generate batch (and items per step of a task)."),
        default_text=gettext_lazy("64 on CUDA, 8 on CPU"),
        min=1,
    ),
    Param(
        "max_batch_tokens",
        INT,
        gettext_lazy("Token budget of one batch: rows x (longest prompt + new tokens)."),
        default_text=gettext_lazy("on CUDA what memory_fraction of the free memory holds; on CPU no limit"),
        min=1,
        advanced=True,
    ),
    Param(
        "memory_fraction",
        NUMBER,
        gettext_lazy("Share of the free GPU memory the token budget may use."),
        default=0.6,
        min=0,
        max=1,
        min_exclusive=True,
        advanced=True,
    ),
    Param(
        "min_new_tokens",
        INT,
        gettext_lazy("Fewest tokens generated per reply."),
        default_text=gettext_lazy("none"),
        min=0,
        advanced=True,
    ),
    Param(
        "ignore_images",
        BOOL,
        gettext_lazy("A text-only model judges without the item images instead of failing."),
        default=False,
        advanced=True,
    ),
    Param(
        "cache",
        CHOICE,
        gettext_lazy(
            "KV cache: static (allocated once per batch shape, several times faster decoding on a GPU; "
            "same greedy replies) or dynamic (grows token by token)."
        ),
        default_text=gettext_lazy("static on CUDA, dynamic on CPU"),
        choices=("static", "dynamic"),
        advanced=True,
    ),
    Param(
        "compile",
        BOOL,
        gettext_lazy(
            "With the static cache on CUDA, compile the decode step into CUDA graphs (the first batch of each "
            "shape waits for the compilation)."
        ),
        default=True,
        advanced=True,
    ),
)

EMBEDDING: tuple[Param, ...] = (
    Param(
        "reflect_tau",
        NUMBER,
        gettext_lazy("A value is reflected when some line of the story has at least this cosine similarity with it."),
        default=0.35,
        min=-1,
        max=1,
        modes=("cqbench",),
    ),
    Param(
        "rewrite_step",
        NUMBER,
        gettext_lazy("Rewrite improvement = the drop in similarity to the values / this step, capped at 5."),
        default=0.05,
        min=0,
        min_exclusive=True,
        modes=("cqbench",),
    ),
    Param("device", DEVICE, gettext_lazy("Where the encoder runs."), default="cpu", advanced=True),
)

IMAGE_SIMILARITY: tuple[Param, ...] = (
    Param(
        "q3_thresholds",
        NUMBER_PAIR,
        gettext_lazy("SSIM of Image A vs Image B: below the first Q3 = 0, below the second 1, else 2 (our default)."),
        default=[0.35, 0.6],
        min=-1,
        max=1,
        modes=("valueground_q3",),
    ),
    *_thresholds(
        0.3,
        None,
        gettext_lazy("SSIM is a proxy on its own scale; calibrate on images people have flagged."),
    ),
)

CLIP_SIMILARITY: tuple[Param, ...] = (
    *_thresholds(0.75, 0.85, gettext_lazy("The paper's thresholds by default (Sec. 3.2).")),
    Param(
        "batch_size", INT, gettext_lazy("Images per forward pass (and items per step of a task)."), default=16, min=1
    ),
    Param(
        "device", DEVICE, gettext_lazy("Where CLIP runs."), default_text=gettext_lazy("cuda when available, else cpu")
    ),
    Param(
        "dtype",
        CHOICE,
        gettext_lazy("Precision; half precision can move a score across a threshold."),
        default="float32",
        choices=("float32", "float16", "bfloat16"),
        advanced=True,
    ),
)

_AHEAD_OWN: tuple[Param, ...] = (
    Param(
        "extractor",
        CHOICE,
        gettext_lazy("The vision-language model extracting descriptors: an OpenAI-compatible endpoint or in-process."),
        default_text=gettext_lazy("openai_chat when base_url is given, else transformers"),
        choices=("openai_chat", "transformers"),
    ),
    Param(
        "tau",
        NUMBER,
        gettext_lazy(
            "Descriptors match above this cosine similarity (0.52 InternVL3, 0.67 Qwen2.5-VL; manage.py ahead "
            "calibrate)."
        ),
        default=TAU_INTERNVL3,
        min=-1,
        max=1,
    ),
    Param(
        "ita_model",
        TEXT,
        gettext_lazy(
            "A local CLIP or SigLIP folder scoring images against text: needed for EXAG, so for faith and exag."
        ),
        default_text=gettext_lazy("none (the judge then answers hal only)"),
    ),
    Param(
        "real_generator",
        TEXT,
        gettext_lazy("The generator of the project's real images (EXAG's baseline)."),
        default="real",
    ),
    Param(
        "seed", INT, gettext_lazy("Seed of the first pass; pass n uses seed + n."), default_text=gettext_lazy("none")
    ),
    Param(
        "exag_candidates",
        INT,
        gettext_lazy("Stereotype candidates asked of the extractor (Table 28)."),
        default=10,
        min=1,
        max=100,
        advanced=True,
    ),
    Param(
        "encoder",
        TEXT,
        gettext_lazy("The sentence encoder matching descriptors."),
        default_text=gettext_lazy("all-MiniLM-L6-v2 (shipped offline)"),
        advanced=True,
    ),
    Param("encoder_device", DEVICE, gettext_lazy("Where the sentence encoder runs."), default="cpu", advanced=True),
    Param(
        "ita_device",
        DEVICE,
        gettext_lazy("Where the image-text model runs."),
        default_text=gettext_lazy("cuda when available, else cpu"),
        advanced=True,
    ),
    Param("image_field", TEXT, gettext_lazy("The item's image field."), default="image", advanced=True),
)
# the extractor's defaults the AHEaD judge sets (backends/ahead.py, App. A.4: temperature 0)
_AHEAD_EXTRACTOR_DEFAULTS: dict[tuple[str, str], Any] = {
    ("openai_chat", "temperature"): 0,
    ("openai_chat", "max_tokens"): 512,
    ("transformers", "max_new_tokens"): 512,
}


def _ahead() -> tuple[Param, ...]:
    """The AHEaD judge's own parameters, then its extractor's: every parameter it does not read
    itself goes to the extractor's backend (``backends/ahead.py``, ``OWN_PARAMS``)."""
    own = {"mode"} | {p.name for p in _AHEAD_OWN} | {p.name for p in COMMON}
    extra: dict[str, Param] = {}
    for extractor, declared in (("openai_chat", OPENAI_CHAT), ("transformers", TRANSFORMERS)):
        for p in declared:
            if p.name in own:
                continue
            if p.name in extra:  # read by both extractors: one field, for both
                extra[p.name] = replace(extra[p.name], extractors=(*extra[p.name].extractors, extractor))
                continue
            default = _AHEAD_EXTRACTOR_DEFAULTS.get((extractor, p.name), p.default)
            extra[p.name] = replace(
                p,
                extractors=(extractor,),
                default=default,
                default_text="" if (extractor, p.name) in _AHEAD_EXTRACTOR_DEFAULTS else p.default_text,
                advanced=p.advanced or p.name not in ("base_url", "api_key_env", "device"),
            )
    return (*_AHEAD_OWN, *extra.values())


AHEAD = _ahead()


# Which backend declares which parameters is its registry entry's business
# (``backends.base.BackendEntry.params`` and ``modes``, ``judges/registry.py``): the functions
# below take a backend's whole schema, which ``BackendEntry.schema`` builds with :func:`schema`.
def schema(own: Sequence[Param] | None, modes: Sequence[str] = ()) -> tuple[Param, ...]:
    """Every parameter of a backend: its ``mode`` (a prompt-less backend with ``modes``), its
    own, then the common ones it does not redeclare; ``()`` for ``None``, a backend that has no
    parameters of its own (an ensemble: its members' parameters are theirs)."""
    if own is None:
        return ()
    own = (mode_param(modes), *own) if modes else tuple(own)
    names = {p.name for p in own}
    return (*own, *(p for p in COMMON if p.name not in names))


def declared(schema: Sequence[Param], name: str) -> Param | None:
    return next((p for p in schema if p.name == name), None)


def undeclared(schema: Sequence[Param], params: Mapping[str, Any], *, internal: Sequence[str] = ()) -> list[str]:
    """The keys of ``params`` a backend with this schema does not read (``internal``: the
    parameters the platform sets for it, read too)."""
    names = {p.name for p in schema} | set(internal)
    return [k for k in params if k not in names]


# ------------------------------------------------------------------------------ checks
class ParamError(ValueError):
    """Parameters a backend cannot use: ``errors`` maps each parameter to what is wrong."""

    def __init__(self, errors: Mapping[str, str]) -> None:
        self.errors = dict(errors)
        super().__init__("; ".join(self.errors.values()))


def _is_number(v: Any) -> bool:
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return False
    try:
        return math.isfinite(float(v))
    except OverflowError:  # a whole number too large for a float (JSON allows any)
        return False


def _in_range(p: Param, v: float) -> bool:
    if p.min is not None and (v <= p.min if p.min_exclusive else v < p.min):
        return False
    return p.max is None or v <= p.max


def problem(p: Param, value: Any, *, image_fields: Sequence[str] | None = None) -> str | None:
    """What is wrong with ``value`` for ``p``, or None."""
    if value is None and p.nullable:
        return None
    t = p.type
    ok: bool
    what: str
    if t == INT:
        ok = isinstance(value, int) and not isinstance(value, bool) and _in_range(p, value)
        what = " ".join([_("a whole number"), p.range_text()]).strip()
    elif t == NUMBER:
        ok = _is_number(value) and _in_range(p, float(value))
        what = " ".join([_("a number"), p.range_text()]).strip()
    elif t == BOOL:
        ok, what = isinstance(value, bool), _("true or false")
    elif t == CHOICE:
        ok, what = value in p.choices, p.range_text()
    elif t == NUMBER_PAIR:
        ok = (
            isinstance(value, (list, tuple))
            and len(value) == 2
            and all(_is_number(v) and _in_range(p, float(v)) for v in value)
            and float(value[0]) <= float(value[1])
        )
        what = _("two numbers %(range)s, the first at most the second") % {"range": p.range_text()}
    elif t == TEXT_OR_LIST:
        ok = isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))
        what = _("a text or a list of texts")
    elif t == IMAGE_FIELDS:
        ok = isinstance(value, list) and all(isinstance(v, str) and v for v in value)
        what = _("a list of image field names")
        if ok and image_fields is not None:
            unknown = [v for v in value if v not in image_fields]
            if unknown:
                return _(
                    "params.%(name)s names no image field of this preset: %(unknown)s (its image fields: %(fields)s)"
                ) % {
                    "name": p.name,
                    "unknown": ", ".join(unknown),
                    "fields": ", ".join(image_fields) or _("none"),
                }
    elif t == DEVICE:
        ok, what = isinstance(value, str) and bool(DEVICE_PATTERN.match(value)), _("cpu, cuda or cuda:<n>")
    elif t in (ENDPOINT, KEY_ENV):
        if not isinstance(value, str):
            ok, what = False, _("a URL") if t == ENDPOINT else _("the name of an environment variable")
        else:
            try:  # the administrator's allow-lists (judges/endpoints.py) give the reason
                if t == ENDPOINT and value:
                    endpoints.check_base_url(value)
                elif t == KEY_ENV:
                    endpoints.check_key_name(value)
            except ValueError as exc:
                return str(exc)
            return None
    else:  # TEXT
        ok, what = isinstance(value, str), _("text")
    if ok:
        return None
    if p.nullable and p.null_help:
        what = _("%(what)s, or null (%(help)s)") % {"what": what, "help": p.null_help}
    return _("params.%(name)s must be %(what)s, not %(value)r") % {"name": p.name, "what": what, "value": value}


def check(
    schema: Sequence[Param],
    params: Mapping[str, Any],
    *,
    internal: Sequence[str] = (),
    image_fields: Sequence[str] | None = None,
) -> None:
    """:class:`ParamError` listing every declared parameter of ``params`` whose value a backend
    with this schema cannot use (``image_fields``: the preset's, when known; ``internal``: the
    parameters only the platform sets). Parameters it does not declare are left as given;
    cross-parameter rules (a filter deciding no flag, EXAG without an image-text model) are the
    backend's own checks."""
    errors: dict[str, str] = {}
    for name in internal:
        if name in params:
            errors[name] = _("params.%(name)s is set by the platform, not in a judge's parameters") % {"name": name}
    for p in schema:
        if p.name in params:
            found = problem(p, params[p.name], image_fields=image_fields)
            if found:
                errors[p.name] = found
    if errors:
        raise ParamError(errors)


# ------------------------------------------------------------------------------ shown
@dataclass(frozen=True)
class Row:
    """One parameter of a judge as its page shows it."""

    name: str
    value: str  # the value set, "" when the default applies
    default: str
    help: str
    read: bool  # False: set, but this backend (in this mode) does not read it
    label: str = ""  # the parameter in words ("" for one the backend does not declare)
    value_label: str = ""  # the value set in words, for a choice that has them


def describe(
    schema: Sequence[Param],
    params: Mapping[str, Any],
    *,
    internal: Sequence[str] = (),
    mode: str = "",
    extractor: str = "",
) -> list[Row]:
    """The judge's parameters as rows: every parameter its backend reads in this mode (set or
    default), then those set that it does not read. Secret-named values are hidden
    (``endpoints.public_params``); the key is never shown, only the name of its variable."""
    shown = endpoints.public_params(dict(params))
    rows = []
    for p in schema:
        if p.name in shown or p.applies(mode=mode, extractor=extractor):
            rows.append(
                Row(
                    name=p.name,
                    value=show_value(shown[p.name]) if p.name in shown else "",
                    default=p.default_shown(),
                    help=str(p.help),
                    read=p.applies(mode=mode, extractor=extractor),
                    label=p.label,
                    value_label=p.choice_label(shown[p.name]) if p.name in shown and p.type == CHOICE else "",
                )
            )
    for name in undeclared(schema, shown, internal=internal):
        rows.append(Row(name=name, value=show_value(shown[name]), default="", help="", read=False))
    return rows


__all__ = [
    "CHOICE_LABELS",
    "COMMON",
    "LABELS",
    "Param",
    "ParamError",
    "Row",
    "check",
    "declared",
    "describe",
    "mode_param",
    "problem",
    "schema",
    "show_value",
    "undeclared",
]
