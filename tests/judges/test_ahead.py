"""AHEaD (CULTIVate, cultivate-ahead.txt Sec. 3.2, App. A.3-A.6) as a judge of the faithfulness preset.

- the metric against hand-computed examples of Eq. 1-7 and App. A.3, and Eq. 5 against the
  paper's own Table 1 (FAITH from its ALIGN, HAL and EXAG columns);
- the paper's prompts and the readers of their replies;
- unrounded scores combined over passes;
- configuration checks (nothing stored on a refusal);
- end to end: descriptors extracted through the loopback OpenAI-compatible server, matched with
  the offline all-MiniLM-L6-v2, EXAG with a tiny random CLIP against real reference images,
  stored as the model rater, then the validation report's FAITH vs GT-FAITH by region (Tables 2
  and 3), the tau calibration and the diversity scores (``manage.py ahead``);
- the in-process transformers VLM as the extractor (a tiny random LLaVA)."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from PIL import Image
from scipy import stats as ss

from agreement.validation import compute_tables
from annotate import annotating
from annotation import importing, projects
from annotation.assets import media_path
from annotation.models import Annotation, Asset, Assignment, Item
from annotation.rubric import Rubric
from benchmarks.registry import get_preset
from core.errors import DomainError
from judges import ahead, ahead_metrics, ahead_prompts, configuration, runs
from judges.backends import JudgeItem, JudgeSpec
from judges.backends.ahead import REAL_IMAGES_PARAM, AheadBackend
from judges.backends.embedding import embed, load_encoder
from judges.combine import combine
from judges.models import JudgeConfig, JudgeItemResult, JudgeOutput
from judges.registry import backend_for
from tests.annotation.factories import make_project
from tests.studies.design_helpers import annotator

from .chat_server import ChatServer
from .test_judge_runs import FAST, run_all, start

TAU = 0.52


# ------------------------------------------------------------------------------ Eq. 1-7, A.3
def test_align_and_hal_follow_equations_1_and_2():
    # s_ij, predicted i x reference j; tau = 0.52
    S = np.array([[0.90, 0.10, 0.52], [0.20, 0.30, 0.10]])
    rb = ahead_metrics.reference_best(S, 2, 3)
    pb = ahead_metrics.predicted_best(S, 2, 3)
    assert rb.tolist() == [0.9, 0.3, 0.52] and pb.tolist() == [0.9, 0.3]
    # Eq. 1: "> tau": ref 1 matched (0.90); ref 2 not (0.30); ref 3 sits on tau, not above it
    assert ahead_metrics.align(rb, TAU) == pytest.approx(1 / 3)
    # Eq. 2: "<= tau": pred 1 has a match (0.90), pred 2 does not (0.30)
    assert ahead_metrics.hal(pb, TAU) == pytest.approx(1 / 2)
    # nothing predicted: no reference can be matched (ALIGN 0), HAL is the share of an empty set
    assert ahead_metrics.align(ahead_metrics.reference_best(np.zeros((0, 2)), 0, 2), TAU) == 0.0
    assert ahead_metrics.hal(ahead_metrics.predicted_best(np.zeros((0, 2)), 0, 2), TAU) is None
    # no reference (an empty dimension): ALIGN undefined, every prediction unsupported
    assert ahead_metrics.align(ahead_metrics.reference_best(np.zeros((3, 0)), 3, 0), TAU) is None
    assert ahead_metrics.hal(ahead_metrics.predicted_best(np.zeros((3, 0)), 3, 0), TAU) == 1.0
    with pytest.raises(ValueError, match="not \\(predicted, reference\\)"):
        ahead_metrics.reference_best(S, 3, 2)


def test_scores_are_averaged_over_the_dimensions_where_they_are_defined():
    assert ahead_metrics.dimension_mean({"setting": 0.5, "objects": 1.0, "attire": None}) == pytest.approx(0.75)
    assert ahead_metrics.dimension_mean({"setting": None}) is None


def test_exag_is_the_mean_largest_positive_excess_over_the_real_images_equations_3_and_4():
    real = [[0.2, 0.5], [0.4, 0.3]]  # two real images x two stereotype candidates
    baseline = ahead_metrics.exag_baseline(real)
    assert baseline.tolist() == pytest.approx([0.3, 0.4])  # Eq. 3
    generated = [[0.35, 0.9], [0.1, 0.2]]
    # image 1: max(0.05, 0.50) = 0.50; image 2: max(0, 0) = 0 (never negative); mean over N = 2
    assert ahead_metrics.exag(generated, baseline) == pytest.approx(0.25)
    assert ahead_metrics.exag([[0.35, 0.9]], baseline) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="at least one real image"):
        ahead_metrics.exag_baseline(np.zeros((0, 2)))
    with pytest.raises(ValueError, match="one score per stereotype candidate"):
        ahead_metrics.exag([[0.1, 0.2, 0.3]], baseline)


def test_faith_is_the_mean_of_align_one_minus_hal_and_one_minus_exag_equation_5():
    assert ahead_metrics.faith(0.4, 0.6, 0.1) == pytest.approx((0.4 + 0.4 + 0.9) / 3)
    assert ahead_metrics.align_hal(0.4, 0.6) == pytest.approx(0.4)


# Table 1 (N=1): model, region, ALIGN, HAL, EXAG, FAITH as printed (two decimals)
TABLE_1 = [
    ("SD-3.5-medium", "GN", 0.31, 0.55, 0.05, 0.57),
    ("SD-3.5-medium", "GS", 0.26, 0.61, 0.08, 0.52),
    ("FLUX.1-dev", "GN", 0.30, 0.56, 0.04, 0.57),
    ("FLUX.1-dev", "GS", 0.25, 0.63, 0.06, 0.52),
    ("Qwen-Image", "GN", 0.36, 0.51, 0.06, 0.60),
    ("Qwen-Image", "GS", 0.30, 0.56, 0.10, 0.55),
    ("DALL-E 3", "GN", 0.36, 0.50, 0.10, 0.59),
    ("DALL-E 3", "GS", 0.32, 0.54, 0.12, 0.55),
    ("GPT-Image-1", "GN", 0.36, 0.49, 0.06, 0.61),
    ("GPT-Image-1", "GS", 0.30, 0.55, 0.07, 0.56),
    ("Gemini 2.5 Flash Image", "GN", 0.40, 0.46, 0.10, 0.61),
    ("Gemini 2.5 Flash Image", "GS", 0.35, 0.50, 0.12, 0.57),
]


@pytest.mark.parametrize(("model", "region", "a", "h", "e", "f"), TABLE_1)
def test_equation_5_reproduces_the_faith_column_of_table_1(model, region, a, h, e, f):
    # FAITH is linear, so the mean FAITH is FAITH of the means; each printed input is within
    # 0.005 of its value, so Eq. 5 of them is within 0.005 of the true FAITH, printed within 0.005
    assert abs(ahead_metrics.faith(a, h, e) - f) <= 0.01 + 1e-12, (model, region)


def test_ddiv_is_the_normalised_entropy_of_reference_hits_equation_6():
    # q = (2/4, 1/4, 1/4) over |D^ref| = 4: H = 1.5 ln 2, log |D^ref| = 2 ln 2
    assert ahead_metrics.ddiv([2, 1, 1, 0]) == pytest.approx(0.75)
    assert ahead_metrics.ddiv([1, 1, 1]) == pytest.approx(1.0)  # every descriptor equally often
    assert ahead_metrics.ddiv([5, 0, 0]) == pytest.approx(0.0)  # always the same one
    assert ahead_metrics.ddiv([3]) is None  # log 1 = 0
    assert ahead_metrics.ddiv([0, 0]) is None  # nothing matched: no frequencies


def test_sdiv_is_the_gain_of_n_images_over_one_equation_7():
    assert ahead_metrics.sdiv(0.6, [0.2, 0.4]) == pytest.approx(0.3)
    with pytest.raises(ValueError):
        ahead_metrics.sdiv(0.6, [])


def test_tau_candidates_are_the_quartiles_and_q3_is_chosen_appendix_a3():
    c = ahead_metrics.tau_candidates([0.2, 0.4, 0.5, 0.6, 0.8, float("nan")])
    assert (c.q1, c.median, c.q3, c.n) == pytest.approx((0.4, 0.5, 0.6, 5))
    assert c.chosen == c.q3
    with pytest.raises(ValueError, match="no descriptor similarities"):
        ahead_metrics.tau_candidates([])


def test_scores_on_the_rubric_scale():
    assert [ahead_metrics.to_likert(x) for x in (0.0, 0.5, 0.6, 1.0, -0.2, 1.3)] == pytest.approx(
        [1.0, 3.0, 3.4, 5.0, 1.0, 5.0]
    )
    assert ahead_metrics.from_likert(3.4) == pytest.approx(0.6)


# ------------------------------------------------------------------------------ prompts, replies
def test_the_extraction_prompts_are_the_papers_with_the_activity_and_country():
    assert tuple(ahead_prompts.EXTRACTOR_DIMENSIONS) == ahead_metrics.DIMENSIONS
    system, user = ahead_prompts.extraction_prompt("spatial", "eating at home", "Iran")
    assert system.startswith("As an expert on cross-cultural visual representation")
    assert '"descriptors": [{"token": "...", "style": "traditional|modern|neutral"}]' in system
    assert user.startswith("Goal: Describe the physical layout and positioning of key objects.")
    assert "sitting around sofreh" in user and user.endswith("ACTIVITY: eating at home\n\nCOUNTRY: Iran")
    system, user = ahead_prompts.candidates_prompt("eating at home", "Iran", 7)
    assert "Generate up to 7 candidate exaggerated elements" in system
    assert system.endswith("ACTIVITY: eating at home\n\nCOUNTRY: Iran")
    assert user.startswith("Provide the final list as a single line of noun phrases")


def test_descriptor_replies_are_read_from_the_json_the_prompt_asks_for():
    reply = '{"descriptors": [{"token": "sofreh", "style": "traditional"}, {"token": " Sofreh ", "style": "modern"}]}'
    assert ahead_prompts.parse_descriptors(reply) == ["sofreh"]  # a set: repeats dropped
    fenced = '```json\n{"descriptors": [{"token": "rice bowls", "style": "neutral"}]}\n```'
    assert ahead_prompts.parse_descriptors(fenced) == ["rice bowls"]
    assert ahead_prompts.parse_descriptors('"descriptors": [{"token": "tea", "style": "modern"}]') == ["tea"]
    assert ahead_prompts.parse_descriptors('Sure! {"descriptors": []} Hope this helps.') == []  # rule 5
    for bad in ("score is 4", '{"tokens": []}', '{"descriptors": [{"style": "modern"}]}', ""):
        with pytest.raises(ahead_prompts.ReplyError):
            ahead_prompts.parse_descriptors(bad)


def test_stereotype_candidates_are_read_from_the_table_28_line():
    example = "Persian rugs | oversize lanterns | giant religious symbols\n| people in traditional robes"
    assert ahead_prompts.parse_candidates(example, 10) == [
        "Persian rugs",
        "oversize lanterns",
        "giant religious symbols",
        "people in traditional robes",
    ]
    # the em dash the instruction asks for; an en dash inside a phrase (Table 12) stays
    assert ahead_prompts.parse_candidates("red–yellow color schemes — giant paella pans — 1. flags", 2) == [
        "red–yellow color schemes",
        "giant paella pans",
    ]
    with pytest.raises(ahead_prompts.ReplyError):
        ahead_prompts.parse_candidates(" | ", 5)


def test_reference_descriptors_by_dimension_name():
    got = ahead_prompts.reference_descriptors(
        {
            "Setting & Background": ["temple interior"],
            "Spatial Layout": [{"token": "kneeling rows", "style": "neutral"}],
        }
    )
    assert got == {"setting": ["temple interior"], "spatial": ["kneeling rows"]}
    for bad, message in (
        (None, "no reference descriptors"),
        ({"colour": ["red"]}, "unknown descriptor dimension"),
        ({"objects": []}, "all empty"),
        ({"objects": "samovar"}, "expected a list"),
    ):
        with pytest.raises(ValueError, match=message):
            ahead_prompts.reference_descriptors(bad)


def test_unrounded_scores_are_averaged_over_passes_whatever_the_combine_rule():
    rubric = Rubric.from_schema(get_preset("cultivate.faithfulness").rubric)
    answers, exact = combine(
        rubric, ["faith", "hal"], [{"faith": 3, "hal": 2}, {"faith": 4, "hal": 2}], "majority",
        unrounded=[{"faith": 3.4, "hal": 2.0}, {"faith": 3.5, "hal": 2.0}],
    )  # fmt: skip
    assert answers == {"faith": 3, "hal": 2}  # the option nearest 3.45, not the rounded passes' majority
    assert exact == {"faith": pytest.approx(3.45)}
    # a pass without unrounded scores: the rounded answers as before
    answers, exact = combine(rubric, ["faith"], [{"faith": 3}, {"faith": 4}], "mean", unrounded=[{"faith": 3.4}, None])
    assert answers == {"faith": 4} and exact == {"faith": 3.5}


# ------------------------------------------------------------------------------ configuration
@pytest.fixture
def faith_project(researcher):
    return make_project("cultivate.faithfulness", owner=researcher)


@pytest.mark.django_db
def test_an_ahead_judge_is_configured_from_the_preset(faith_project):
    config = configuration.create_judge_config(
        project=faith_project,
        name="ahead",
        backend="ahead",
        model_id="OpenGVLab/InternVL3-14B",
        params={"base_url": "http://127.0.0.1:9/v1", "ita_model": "/models/clip"},
    )
    assert config.questions == ["faith", "hal", "exag"] and config.parser == "none" and config.prompt_template == {}
    assert runs.queue_for(config) == "gpu"
    hal_only = configuration.create_judge_config(
        project=faith_project, name="hal", backend="ahead", model_id="m", questions=["hal"], params={}
    )
    assert hal_only.questions == ["hal"]  # no EXAG, so no image-text model needed


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("model_id", "params", "questions", "message"),
    [
        ("", {"ita_model": "/m"}, None, "model id of its descriptor extractor"),
        ("m", {"extractor": "gpt", "ita_model": "/m"}, None, "params.extractor must be one of"),
        ("m", {"tau": 2, "ita_model": "/m"}, None, "params.tau"),
        ("m", {"tau": "high", "ita_model": "/m"}, None, "params.tau"),
        ("m", {"exag_candidates": 0, "ita_model": "/m"}, None, "exag_candidates"),
        ("m", {}, None, "params.ita_model"),
        ("m", {}, ["exag"], "params.ita_model"),
        ("m", {"base_url": "http://evil.example.com/v1", "ita_model": "/m"}, None, "not allowed"),
        (
            "m",
            {"api_key_env": "SECRET_KEY", "base_url": "http://127.0.0.1:9/v1", "ita_model": "/m"},
            None,
            "api_key_env",
        ),
        ("m", {"ita_model": "/m"}, ["realism"], "cannot answer realism"),
    ],
)
def test_bad_ahead_configurations_are_refused_and_nothing_is_stored(
    faith_project, model_id, params, questions, message
):
    with pytest.raises(DomainError, match=message):
        configuration.create_judge_config(
            project=faith_project, name="bad", backend="ahead", model_id=model_id, params=params, questions=questions
        )
    assert not JudgeConfig.objects.filter(project=faith_project).exists()


# ------------------------------------------------------------------------------ end to end
IRAN = {
    "setting": ["Persian rug on the floor", "simple home interior"],
    "objects": ["bowls of rice with saffron", "glasses of black tea"],
    "attire": ["women in headscarves"],
    "interaction": ["sharing food"],
    "spatial": ["family sitting around a sofreh"],
}
GERMANY = {  # three dimensions assessed: the other two are neither asked nor averaged
    "setting": ["open-air stage"],
    "objects": ["crowd holding beer cups"],
    "attire": ["people in rain ponchos"],
}
# what the extractor "sees" in each image, per dimension; every descriptor is a reference verbatim
# (cosine 1) or unrelated to all of them (checked below), so ALIGN and HAL are counts
SEEN = {
    "iran-g1": {
        "setting": ["Persian rug on the floor"],
        "objects": ["bowls of rice with saffron", "glasses of black tea"],
        "attire": ["women in headscarves"],
        "interaction": ["sharing food"],
        "spatial": ["family sitting around a sofreh"],
    },
    "iran-g2": {
        "setting": ["simple home interior", "skyscraper at night"],
        "objects": ["a red sports car"],
        "attire": ["women in headscarves"],
        "interaction": [],
        "spatial": ["family sitting around a sofreh", "surfboard on a beach"],
    },
    "iran-g3": {
        "setting": ["snowy mountain peak"],
        "objects": ["laptop computer on a desk"],
        "attire": ["astronaut helmet"],
        "interaction": ["ice hockey players"],
        "spatial": [],
    },
    "iran-r1": {
        "setting": ["Persian rug on the floor", "simple home interior"],
        "objects": ["glasses of black tea"],
        "attire": ["women in headscarves"],
        "interaction": ["sharing food"],
        "spatial": ["family sitting around a sofreh"],
    },
    "iran-r2": {
        "setting": ["simple home interior"],
        "objects": ["bowls of rice with saffron"],
        "attire": [],
        "interaction": ["sharing food"],
        "spatial": ["family sitting around a sofreh"],
    },
    "germany-g1": {
        "setting": ["open-air stage"],
        "objects": ["crowd holding beer cups"],
        "attire": ["people in rain ponchos", "astronaut helmet"],
    },
    "germany-g2": {"setting": [], "objects": ["a spaceship launch"], "attire": []},
    "germany-r1": {"setting": ["open-air stage"], "objects": ["crowd holding beer cups"], "attire": []},
}
# hand-computed from SEEN (Eq. 1-2 per dimension, then the mean over the defined dimensions)
WANT = {
    # ALIGN: setting 1/2, the rest 1 -> 4.5/5; HAL: nothing unsupported
    "iran-g1": (0.9, 0.0),
    # ALIGN: 1/2, 0, 1, 0, 1 -> 2.5/5; HAL: 1/2, 1, 0, (none predicted), 1/2 -> 2/4
    "iran-g2": (0.5, 0.5),
    # ALIGN 0; HAL: 1, 1, 1, 1, (none predicted) -> 1
    "iran-g3": (0.0, 1.0),
    # ALIGN: 1, 1/2, 1, 1, 1 -> 4.5/5; HAL 0
    "iran-r1": (0.9, 0.0),
    # ALIGN: 1/2, 1/2, 0, 1, 1 -> 3/5; HAL: 0, 0, (none), 0, 0 -> 0
    "iran-r2": (0.6, 0.0),
    # ALIGN 1; HAL: 0, 0, 1/2 -> 1/6
    "germany-g1": (1.0, 1 / 6),
    # ALIGN 0; HAL: (none), 1, (none) -> 1
    "germany-g2": (0.0, 1.0),
    # ALIGN: 1, 1, 0 -> 2/3; HAL 0
    "germany-r1": (2 / 3, 0.0),
}
CANDIDATES_REPLY = "beer steins | lederhosen — giant German flags"
IRAN_STEREOTYPES = ["Persian rugs", "giant domes", "traditional robes"]
GT = {  # the two human raters' GT-FAITH per image
    "iran-g1": (5, 4),
    "iran-g2": (3, 3),
    "iran-g3": (1, 2),
    "iran-r1": (5, 5),
    "iran-r2": (4, 5),
    "germany-g1": (4, 4),
    "germany-g2": (2, 1),
    "germany-r1": (5, 4),
}


def make_tiny_clip(folder: Path, words: list[str], seed: int = 0) -> Path:
    """A randomly initialised CLIP (1-layer text and vision towers) with a word-level tokenizer and
    a CLIP image processor, saved so that AutoModel / AutoTokenizer / AutoImageProcessor load it
    from the folder as they would a real one. Nothing is downloaded."""
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import (
        CLIPConfig,
        CLIPImageProcessor,
        CLIPModel,
        CLIPTextConfig,
        CLIPVisionConfig,
        PreTrainedTokenizerFast,
    )

    specials = ["<pad>", "<unk>", "<s>", "</s>"]
    vocab = {w: i for i, w in enumerate(dict.fromkeys(specials + [w.lower() for w in words]))}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", vocab["<s>"]), ("</s>", vocab["</s>"])]
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="<unk>",
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
        model_max_length=32,
        model_input_names=["input_ids", "attention_mask"],
    )
    config = CLIPConfig(
        text_config=CLIPTextConfig(
            vocab_size=len(vocab),
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            max_position_embeddings=32,
            pad_token_id=vocab["<pad>"],
            bos_token_id=vocab["<s>"],
            eos_token_id=vocab["</s>"],
        ).to_dict(),
        vision_config=CLIPVisionConfig(
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            image_size=16,
            patch_size=8,
        ).to_dict(),
        projection_dim=8,
    )
    torch.manual_seed(seed)
    model = CLIPModel(config)
    image_processor = CLIPImageProcessor(
        do_resize=True,
        size={"shortest_edge": 16},
        do_center_crop=True,
        crop_size={"height": 16, "width": 16},
        do_normalize=True,
        image_mean=[0.5, 0.5, 0.5],
        image_std=[0.5, 0.5, 0.5],
        do_convert_rgb=True,
    )
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    image_processor.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_clip(tmp_path_factory):
    words = " ".join([*IRAN_STEREOTYPES, CANDIDATES_REPLY]).replace("|", " ").replace("—", " ").split()
    return str(make_tiny_clip(tmp_path_factory.mktemp("tiny-clip"), words))


def clip_cosines(model_dir: str, files: list[Path], texts: list[str]) -> np.ndarray:
    """f(I, d) computed here, independently of the backend: the CLIP embeddings' cosine, floored at 0."""
    import torch
    from transformers import AutoImageProcessor, AutoTokenizer, CLIPModel

    model = CLIPModel.from_pretrained(model_dir).eval()
    tok = AutoTokenizer.from_pretrained(model_dir)
    proc = AutoImageProcessor.from_pretrained(model_dir)
    with torch.inference_mode():
        text = tok(texts, padding=True, return_tensors="pt")
        img = proc(images=[Image.open(f).convert("RGB") for f in files], return_tensors="pt")
        out = model(
            input_ids=text["input_ids"], attention_mask=text["attention_mask"], pixel_values=img["pixel_values"]
        )
        t = out.text_embeds / out.text_embeds.norm(dim=-1, keepdim=True)
        i = out.image_embeds / out.image_embeds.norm(dim=-1, keepdim=True)
    return np.maximum((i @ t.T).numpy(), 0.0)


def png(color: tuple[int, int, int], size=(24, 20)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="PNG")
    return buf.getvalue()


def records() -> list[dict]:
    rows = []
    for n, ext in enumerate(SEEN):
        country, kind = ext.split("-")
        iran = country == "iran"
        rows.append(
            {
                "id": ext,
                "image": f"{ext}.png",
                "activity": "eating at home" if iran else "attending an outdoor concert",
                "country": "Iran" if iran else "Germany",
                "region": "Global South" if iran else "Global North",
                "category": "eating" if iran else "concert",
                "generator": "real" if kind.startswith("r") else "FLUX",
                "seed": 42 + n,
                "reference_descriptors": IRAN if iran else GERMANY,
                **({"stereotypes": IRAN_STEREOTYPES} if iran else {}),  # Germany's are asked (Table 28)
            }
        )
    return rows


def extractor_responder(sha_to_item: dict[str, str], asked: list[tuple[str, str]]):
    """The loopback model: Table 28 gets the candidates line; an extraction request gets, for the
    image it was sent (found by its bytes) and the dimension its prompt asks about, SEEN's list."""
    goals = {text.split("\n")[0]: dim for dim, text in ahead_prompts.EXTRACTOR_DIMENSIONS.items()}

    def respond(body: dict) -> str | None:
        system = body["messages"][0]["content"]
        if system.startswith("You are a helpful assistant that identifies culture-specific visual elements"):
            asked.append(("candidates", ""))
            return CANDIDATES_REPLY
        parts = body["messages"][1]["content"]
        text = next(p["text"] for p in parts if p["type"] == "text")
        url = next(p["image_url"]["url"] for p in parts if p["type"] == "image_url")
        item = sha_to_item[hashlib.sha256(base64.b64decode(url.split(",", 1)[1])).hexdigest()]
        dim = goals[text.split("\n")[0]]
        assert body["response_format"]["json_schema"]["schema"] == ahead_prompts.DESCRIPTOR_SCHEMA
        assert body["temperature"] == 0  # App. A.4
        asked.append((item, dim))
        return json.dumps({"descriptors": [{"token": t, "style": "neutral"} for t in SEEN[item][dim]]})

    return respond


@pytest.fixture
def ahead_project(researcher, tmp_path):
    project = make_project("cultivate.faithfulness", owner=researcher)
    folder = tmp_path / "cultivate-ahead"
    folder.mkdir()
    for n, ext in enumerate(SEEN):
        (folder / f"{ext}.png").write_bytes(png((30 * n % 256, 120, 200 - 20 * n)))
    data = "\n".join(json.dumps(r) for r in records()) + "\n"
    report = importing.import_items(project=project, data=data, data_format="jsonl", images=folder)
    assert report.ok, report.errors
    raters = []
    for g in (1, 2):
        user = annotator(f"rater-{g}", nationality="any")
        projects.add_member(project=project, user=user, role="annotator")
        raters.append(projects.rater_for_user(user))
    for item in Item.objects.filter(project=project).order_by("id"):
        for rater, v in zip(raters, GT[item.external_id], strict=True):
            # joining may already have assigned the item (the project's assignment strategy)
            a, _ = Assignment.objects.get_or_create(
                project=project, item=item, rater=rater, purpose=Assignment.Purpose.REGULAR
            )
            answers = {"faith": v, "exag": 2, "hal": 2, "realism": 4, "rationale": "the attire looks a bit off"}
            annotating.submit_annotation(assignment_id=a.id, rater=rater, answers=answers)
    return project


@pytest.mark.django_db
def test_the_real_images_come_from_the_field_the_judge_reads(ahead_project):
    """EXAG's baseline (Eq. 3) and the images judged come from one field: ``params.image_field``."""
    project = ahead_project
    real = list(Item.objects.filter(project=project, generator=ahead.real_generator({})).order_by("id"))
    assert real
    by_default = ahead.real_images_param(project, {})[REAL_IMAGES_PARAM]
    files = {media_path(Asset.objects.get(sha256=it.data["image"]).relative_path()) for it in real}
    assert {Path(f) for group in by_default.values() for f in group} == files
    assert ahead.real_images_param(project, {"image_field": "photo"})[REAL_IMAGES_PARAM] == {}
    moved = real[0]
    moved.data = {**moved.data, "photo": moved.data.pop("image")}
    moved.save(update_fields=["data"])
    photo = ahead.real_images_param(project, {"image_field": "photo"})[REAL_IMAGES_PARAM]
    assert [Path(f) for group in photo.values() for f in group] == [
        media_path(Asset.objects.get(sha256=moved.data["photo"]).relative_path())
    ]


@pytest.mark.django_db
def test_ahead_end_to_end_through_the_loopback_server_minilm_and_a_tiny_clip(
    ahead_project, tiny_clip, django_capture_on_commit_callbacks
):
    project = ahead_project
    items = {it.external_id: it for it in Item.objects.filter(project=project)}
    # the premise of the hand computation: with the offline MiniLM a descriptor matches only itself
    enc = load_encoder("")
    for ref in (IRAN, GERMANY):
        for dim, refs in ref.items():
            preds = sorted({p for seen in SEEN.values() for p in seen.get(dim, [])})
            S = embed(enc, preds) @ embed(enc, refs).T
            same = np.array([[p == r for r in refs] for p in preds])
            assert (S[same] > 0.99).all() and (S[~same] < TAU).all(), dim
    asked: list[tuple[str, str]] = []
    responder = extractor_responder({it.data["image"]: ext for ext, it in items.items()}, asked)
    with ChatServer(responder=responder) as server:
        config = configuration.create_judge_config(
            project=project,
            name="ahead",
            backend="ahead",
            model_id="OpenGVLab/InternVL3-14B",
            params={"base_url": server.base_url, "ita_model": tiny_clip, **FAST},
        )
        run = start(config, django_capture_on_commit_callbacks, chunk_size=3)
        assert run.queue == "gpu"
        run = run_all(run)
    assert run.status == "done", run.message
    assert JudgeItemResult.objects.filter(run=run, status="ok").count() == len(SEEN)
    # five dimensions asked per Iranian image, three per German one; Table 28 asked once per chunk
    # holding German images (Iran's candidates come with its items)
    assert sorted(a for a in asked if a[0] != "candidates") == sorted(
        (ext, dim) for ext in SEEN for dim in (IRAN if ext.startswith("iran") else GERMANY)
    )
    assert 1 <= sum(a[0] == "candidates" for a in asked) <= 2

    # EXAG recomputed here: Eq. 3 over the real images of the prompt, Eq. 4 for each image
    files = {ext: media_path(Asset.objects.get(sha256=it.data["image"]).relative_path()) for ext, it in items.items()}
    candidates = {"iran": IRAN_STEREOTYPES, "germany": ["beer steins", "lederhosen", "giant German flags"]}
    want_exag = {}
    for country, cands in candidates.items():
        mine = [e for e in SEEN if e.startswith(country)]
        real = [e for e in mine if e.split("-")[1].startswith("r")]
        scores = clip_cosines(tiny_clip, [files[e] for e in mine], cands)
        baseline = scores[[mine.index(e) for e in real]].mean(axis=0)
        for e, row in zip(mine, scores, strict=True):
            want_exag[e] = float(np.maximum(row - baseline, 0).max())

    rater = config.rater
    faith_of = {}
    for ext, it in items.items():
        a, h = WANT[ext]
        e = want_exag[ext]
        f = (a + (1 - h) + (1 - e)) / 3
        faith_of[ext] = f
        out = JudgeOutput.objects.get(run=run, item=it)
        raw = json.loads(out.raw_output)
        assert raw["align"] == pytest.approx(a) and raw["hal"] == pytest.approx(h), ext
        assert raw["exag"] == pytest.approx(e, abs=1e-5) and raw["faith"] == pytest.approx(f, abs=1e-5), ext
        assert raw["exag_detail"]["candidates"] == candidates[ext.split("-")[0]]
        ann = Annotation.objects.get(rater=rater, item=it)
        exact = {"faith": 1 + 4 * f, "hal": 1 + 4 * h, "exag": 1 + 4 * e}
        assert ann.answers == {q: math.floor(v + 0.5) for q, v in exact.items()}, ext  # the nearest options
        stored = {**ann.answers, **ann.derived.get("judge_exact", {}).get("answers", {})}
        assert stored == pytest.approx(exact, abs=1e-5), ext
        assert ann.derived["judge_metrics"] == pytest.approx(
            {"ahead_align": a, "ahead_align_hal": (a + 1 - h) / 2}, abs=1e-9
        ), ext
    assert rater.kind == "model" and rater.backend == "ahead" and rater.model_id == "OpenGVLab/InternVL3-14B"

    # the protocol's table: FAITH vs GT-FAITH by region (Table 2) and the components (Table 3)
    tables = {t.key: t for t in compute_tables(project, bootstrap=0)}
    gt = {e: np.mean(v) for e, v in GT.items()}
    regions = {
        "Global South": [e for e in SEEN if e.startswith("iran")],
        "Global North": [e for e in SEEN if e.startswith("germany")],
    }
    regions["All"] = list(SEEN)

    def rho(xs, sel):
        return ss.spearmanr([gt[e] for e in sel], [xs[e] for e in sel]).statistic

    t2 = tables["cultivate-table2"]
    row = next(r.label for r in t2.rows if r.label.endswith(": faith") and "ahead" in r.label)
    for col, sel in regions.items():
        assert t2.cell(row, col).value == pytest.approx(rho(faith_of, sel), abs=1e-9), col
    t3 = tables["cultivate-table3"]
    (judge_row,) = [r.label for r in t3.rows]
    components = {
        "ALIGN": {e: WANT[e][0] for e in SEEN},
        "ALIGN+HAL": {e: (WANT[e][0] + 1 - WANT[e][1]) / 2 for e in SEEN},
        "FAITH": faith_of,
    }
    for name, xs in components.items():
        for col, sel in regions.items():
            assert t3.cell(judge_row, f"{name} {col}").value == pytest.approx(rho(xs, sel), abs=1e-9), (name, col)

    # App. A.3: the quartiles of the reference descriptors' best similarities on the real images
    real_best = []
    for e in ("iran-r1", "iran-r2", "germany-r1"):
        ref = IRAN if e.startswith("iran") else GERMANY
        for dim, refs in ref.items():
            preds = SEEN[e][dim]
            if preds:
                real_best += (embed(enc, preds) @ embed(enc, refs).T).max(axis=0).tolist()
    cands, n_real = ahead.calibrate_tau(config)
    want = ahead_metrics.tau_candidates(real_best)
    assert n_real == 3 and cands.n == want.n == len(real_best)  # a dimension with nothing predicted has no similarity
    assert (cands.q1, cands.median, cands.q3) == pytest.approx((want.q1, want.median, want.q3), abs=1e-4)
    buf = io.StringIO()
    call_command("ahead", "calibrate", str(project.id), "--judge", "ahead", "--format", "json", stdout=buf)
    (table,) = json.loads(buf.getvalue())
    q3 = next(r for r in table["rows"] if r["label"].startswith("Q3"))
    assert q3["cells"][0]["value"] == pytest.approx(cands.q3)

    # Eq. 6-7 over each prompt's generated images (the real ones are references)
    found = {(g.country, g.generator): g for g in ahead.diversity(config)}
    assert set(found) == {("Iran", "FLUX"), ("Germany", "FLUX")}
    iran = found[("Iran", "FLUX")]
    # hits over g1-g3: rug 1, home 1, rice 1, tea 1, headscarves 2, sharing 1, sofreh 2 (9 in all)
    h = 5 * (1 / 9) * math.log(9) + 2 * (2 / 9) * math.log(9 / 2)
    assert iran.n_images == 3 and iran.ddiv == pytest.approx(h / math.log(7))
    assert iran.sdiv == pytest.approx(1.0 - (0.9 + 0.5 + 0.0) / 3)  # every reference hit by some image
    germany = found[("Germany", "FLUX")]
    assert germany.ddiv == pytest.approx(1.0) and germany.sdiv == pytest.approx(1.0 - 0.5)
    buf = io.StringIO()
    call_command("ahead", "diversity", str(project.id), "--judge", "ahead", stdout=buf)
    assert "Table 1 (N images per prompt)" in buf.getvalue() and "Iran: eating at home" in buf.getvalue()


@pytest.mark.django_db
def test_items_without_what_ahead_needs_fail_with_the_reason(researcher, tmp_path, django_capture_on_commit_callbacks):
    project = make_project("cultivate.faithfulness", owner=researcher)
    folder = tmp_path / "imgs"
    folder.mkdir()
    rows = [r for r in records() if r["id"] in ("iran-g1", "germany-g1")]
    rows[0] = {k: v for k, v in rows[0].items() if k != "reference_descriptors"}  # no D^ref
    for r in rows:
        (folder / r["image"]).write_bytes(png((10, 20, 30)))
    assert importing.import_items(
        project=project, data="\n".join(map(json.dumps, rows)), data_format="jsonl", images=folder
    ).ok
    asked: list[tuple[str, str]] = []
    sha = {it.data["image"]: it.external_id for it in Item.objects.filter(project=project)}
    with ChatServer(responder=extractor_responder(sha, asked)) as server:
        config = configuration.create_judge_config(
            project=project,
            name="ahead",
            backend="ahead",
            model_id="m",
            params={"base_url": server.base_url, "ita_model": "/not/needed/before/exag", **FAST},
        )
        run = run_all(start(config, django_capture_on_commit_callbacks))
    errors = dict(JudgeItemResult.objects.filter(run=run).values_list("item__external_id", "error"))
    assert "no reference descriptors" in errors["iran-g1"]
    # Germany's prompt has no real image in this project: EXAG's baseline (Eq. 3) is missing
    assert "no real reference image of 'attending an outdoor concert' in Germany" in errors["germany-g1"]
    assert not Annotation.objects.filter(rater=config.rater).exists()  # no judgement is invented
    # the command refuses what it cannot compute, and names the reason
    for what, message in (("calibrate", "has scored no real image"), ("diversity", "two or more images of one prompt")):
        with pytest.raises(CommandError, match=message):
            call_command("ahead", what, str(project.id), "--judge", "ahead", stdout=io.StringIO())
    configuration.create_judge_config(project=project, name="mllm", backend="openai_chat", model_id="m", params=FAST)
    with pytest.raises(CommandError, match="not an AHEaD judge"):
        call_command("ahead", "calibrate", str(project.id), "--judge", "mllm", stdout=io.StringIO())
    with pytest.raises(CommandError, match="no judge named 'nope'"):
        call_command("ahead", "calibrate", str(project.id), "--judge", "nope", stdout=io.StringIO())


@pytest.mark.django_db
def test_an_image_text_model_that_cannot_load_fails_the_run_with_the_reason(
    researcher, tmp_path, django_capture_on_commit_callbacks
):
    project = make_project("cultivate.faithfulness", owner=researcher)
    folder = tmp_path / "imgs"
    folder.mkdir()
    rows = [r for r in records() if r["id"] in ("germany-g1", "germany-r1")]
    for n, r in enumerate(rows):
        (folder / r["image"]).write_bytes(png((10 + 50 * n, 20, 30)))
    assert importing.import_items(
        project=project, data="\n".join(map(json.dumps, rows)), data_format="jsonl", images=folder
    ).ok
    sha = {it.data["image"]: it.external_id for it in Item.objects.filter(project=project)}
    with ChatServer(responder=extractor_responder(sha, [])) as server:
        config = configuration.create_judge_config(
            project=project,
            name="ahead",
            backend="ahead",
            model_id="m",
            params={"base_url": server.base_url, "ita_model": str(tmp_path / "nowhere"), **FAST},
        )
        run = run_all(start(config, django_capture_on_commit_callbacks))
    assert run.status == "failed" and "cannot load the image-text model" in run.message
    assert not Annotation.objects.filter(rater=config.rater).exists()


# ------------------------------------------------------------------------------ transformers VLM
@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory):
    from .tiny_vlm import make_tiny_vlm

    return str(make_tiny_vlm(tmp_path_factory.mktemp("tiny-llava-ahead")))


def test_the_in_process_vlm_extracts_the_descriptors(tiny_vlm, tmp_path, monkeypatch):
    from judges.backends.local_transformers import TransformersBackend

    preset = get_preset("cultivate.faithfulness")
    spec = JudgeSpec(
        backend="ahead",
        model_id=tiny_vlm,
        prompt_template={},
        parser="none",
        questions=("hal",),
        params={"extractor": "transformers", "max_new_tokens": 6},
        rubric=Rubric.from_schema(preset.rubric),
        item_fields=preset.item_fields,
        preset_key=preset.key,
    )
    backend = backend_for(spec)
    assert isinstance(backend, AheadBackend) and backend.mode == "cultivate"
    image = tmp_path / "img.png"
    image.write_bytes(png((200, 30, 30)))
    seen: list = []
    real = TransformersBackend.generate_batch

    def spy(self, batch):
        seen.extend(batch)
        return real(self, batch)

    monkeypatch.setattr(TransformersBackend, "generate_batch", spy)
    item = JudgeItem(
        item_id=1,
        context={"activity": "eating at home", "country": "Iran", "reference_descriptors": GERMANY},
        images={"image": image},
    )
    (verdict,) = backend.judge([item], [0])
    assert isinstance(backend.extractor(), TransformersBackend) and backend.extractor().kind == "image-text"
    assert [r.images for r in seen] == [[image]] * 3  # one request per assessed dimension, with the image
    assert sorted(r.user.split("\n")[0] for r in seen) == sorted(
        ahead_prompts.EXTRACTOR_DIMENSIONS[d].split("\n")[0] for d in GERMANY
    )
    raw = json.loads(verdict.raw)
    assert set(raw["replies"]) == set(GERMANY)  # what the model said is kept
    # a random model does not write the JSON asked for: the item fails, nothing is guessed
    if verdict.error:
        assert verdict.error.startswith("parse failed") and verdict.answers is None
    else:  # pragma: no cover - a random model that happened to answer in JSON
        assert set(verdict.answers) == {"hal"}
