"""Prompts as the papers give them (issue 13, point 3).

- Images are labelled where the rubric names them ("Image A:" before Image A, as ValueGround's
  own prompts write "Image A: [IMAGE_A]"), in the OpenAI message content and in the
  vision-language chat template of the transformers backend.
- CQ-Bench's incorporation and consistency checks keep the paper's output formats
  ("[Value]:[Reasoning, Yes/No] Values not reflected: [Value]"; "[Contradictions]: ... / NO"),
  read by their own parsers, with clear errors for malformed replies.
- The value-extraction grader (App. D "LLM evaluation prompt") scores each ground-truth value
  1 / 0.5 / 0 (Sec. 4.1); the story score is their mean, checked by hand; and its agreement
  with people comes out in the preset's validation report, end to end on a loopback server."""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import pytest
from PIL import Image

from agreement.validation import compute_tables
from annotate import annotating
from annotation import importing
from annotation.models import Annotation, Assignment
from annotation.rubric import Rubric
from benchmarks.registry import get_preset
from core.errors import DomainError
from judges import configuration, formats, prompts
from judges.backends import ChatRequest, JudgeItem, JudgeSpec
from judges.backends.local_transformers import user_content
from judges.models import JudgeOutput
from judges.orders import swapped_item
from judges.parsers import (
    ParseError,
    parse_ground_truth_scores,
    parse_value_contradictions,
    parse_values_reflected,
)
from judges.registry import backend_for
from tests.annotation.factories import jsonl, make_project, make_user, png_bytes

from .chat_server import ChatServer
from .helpers import project_with_demo
from .test_judge_runs import run_all, start
from .tiny_vlm import IMAGE_SIZE, PATCH, make_tiny_vlm

FAST = {"backoff_s": 0.01, "max_backoff_s": 0.05, "timeout_s": 5, "max_retries": 1}
VG = "valueground.pair_quality"
RED, BLUE = (220, 30, 30), (30, 30, 220)


# ------------------------------------------------------------------------ labelled images
def spec_for(preset_key: str, backend: str = "openai_chat", model_id: str = "judge", **params) -> JudgeSpec:
    p = get_preset(preset_key)
    rubric = Rubric.from_schema(p.rubric)
    d = prompts.preset_defaults(p, rubric)
    return JudgeSpec(
        backend=backend,
        model_id=model_id,
        prompt_template=params.pop("template", d["prompt_template"]),
        parser=d["parser"],
        questions=tuple(d["questions"]),
        params={"base_url": "http://127.0.0.1:9/v1", **params},
        rubric=rubric,
        item_fields=p.item_fields,
        preset_key=preset_key,
    )


@pytest.fixture
def pair(tmp_path) -> JudgeItem:
    (tmp_path / "a.png").write_bytes(png_bytes(RED))
    (tmp_path / "b.png").write_bytes(png_bytes(BLUE))
    ctx = {"question": "Family?", "option_a": "Very important", "option_b": "Not at all important"}
    return JudgeItem(1, ctx, {"image_a": tmp_path / "a.png", "image_b": tmp_path / "b.png"})


def sent_images(content: list[dict]) -> list[bytes]:
    return [base64.b64decode(p["image_url"]["url"].split(",", 1)[1]) for p in content if p["type"] == "image_url"]


def test_valueground_images_reach_an_openai_judge_as_image_a_and_image_b(pair):
    backend = backend_for(spec_for(VG))
    [(_, req)] = backend.units(pair)
    assert req.image_labels == ["Image A", "Image B"]  # the rubric's names (Q1 "Image A", Q2 "Image B")
    content = backend.payload(req)["messages"][-1]["content"]
    assert [(p["type"], p.get("text")) for p in content] == [
        ("text", req.user),
        ("text", "Image A:"),
        ("image_url", None),
        ("text", "Image B:"),
        ("image_url", None),
    ]
    assert sent_images(content) == [pair.images["image_a"].read_bytes(), pair.images["image_b"].read_bytes()]


def test_a_swapped_pair_shows_image_b_under_the_name_image_a(pair):
    """Both orders (position-bias check): the names stay in place, the images trade them."""
    backend = backend_for(spec_for(VG))
    [(_, req)] = backend.units(swapped_item(pair, get_preset(VG).pair_order))
    content = backend.payload(req)["messages"][-1]["content"]
    assert content[1]["text"] == "Image A:"
    assert sent_images(content) == [pair.images["image_b"].read_bytes(), pair.images["image_a"].read_bytes()]


def test_images_the_rubric_does_not_name_go_unlabelled_and_a_template_can_name_them(pair, tmp_path):
    img = tmp_path / "img.png"
    img.write_bytes(png_bytes())
    item = JudgeItem(2, {"activity": "eating at home", "country": "Iran"}, {"image": img})
    for qid_req in backend_for(spec_for("cultivate.faithfulness")).units(item):
        req = qid_req[1]
        assert req.image_labels == [""]  # CULTIVate's prompts speak of "the image": one, unnamed
        content = backend_for(spec_for("cultivate.faithfulness")).payload(req)["messages"][-1]["content"]
        assert [p["type"] for p in content] == ["text", "image_url"]
    named = {**prompts.GENERIC_TEMPLATE, "image_labels": {"image_a": "Left photo", "image_b": "Right photo"}}
    backend = backend_for(spec_for(VG, template=named))
    [(_, req)] = backend.units(pair)
    texts = [p["text"] for p in backend.payload(req)["messages"][-1]["content"] if p["type"] == "text"]
    assert texts[1:] == ["Left photo:", "Right photo:"]


def test_a_request_with_fewer_labels_than_images_leaves_the_rest_unlabelled(tmp_path):
    paths = [tmp_path / f"{i}.png" for i in range(3)]
    req = ChatRequest(system="", user="u", images=paths, image_labels=["Image A"])
    assert req.labelled_images() == [("Image A", paths[0]), ("", paths[1]), ("", paths[2])]


@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory):
    return str(make_tiny_vlm(tmp_path_factory.mktemp("tiny-llava-labels")))


def test_the_vision_language_chat_template_gets_each_label_before_its_image(pair, tiny_vlm):
    backend = backend_for(spec_for(VG, backend="transformers", model_id=tiny_vlm, max_new_tokens=3))
    [(_, req)] = backend.units(pair)
    content = user_content(req, Image.open)
    assert [(p["type"], p.get("text")) for p in content] == [
        ("text", "Image A:"),
        ("image", None),
        ("text", "Image B:"),
        ("image", None),
        ("text", req.user),
    ]
    assert content[1]["image"].getpixel((0, 0)) == RED and content[3]["image"].getpixel((0, 0)) == BLUE
    text = backend.processor.apply_chat_template(
        [[{"role": "user", "content": content}]], tokenize=False, add_generation_prompt=True
    )[0]
    assert "user: Image A:<image> Image B:<image> " in text
    enc = backend._inputs([req])
    assert enc["pixel_values"].shape[0] == 2
    assert int((enc["input_ids"] == backend.model.config.image_token_index).sum()) == 2 * (IMAGE_SIZE // PATCH) ** 2


# ------------------------------------------------------------------ CQ-Bench output formats
VALUES = [
    ("Family is very important in life.", "agree"),
    ("Work should always come first, even if it means less spare time.", "disagree"),
    (
        "In your view, how often do the following things occur in this country's elections: Voters are bribed?",
        "Very often",
    ),
]
V1, V2, V3 = (f"{s}-{a}" for s, a in VALUES)


@pytest.mark.parametrize(
    "reply, want",
    [
        # the paper's format, "Values not reflected" left blank
        (
            f"{V1}: Mei goes home for the family dinner, Yes\n{V2}: she skips overtime, Yes\n"
            f"{V3}: the elders' talk of envelopes, Yes\nValues not reflected:",
            [1, 1, 1],
        ),
        # one value not reflected, listed at the end; en dashes, brackets, bold and numbering
        (
            f"1. [{VALUES[0][0]} \u2013 agree]: the family waits for grandma. **Yes**\n"
            f"2. [{VALUES[1][0]} \u2013 disagree]: nothing about work hours is said.\nNo\n"
            f"3. {V3}: Yes, the rumours at the market\n\n**Values not reflected:** {V2}",
            [1, 0, 1],
        ),
        # "None" under the header; a value named by its statement alone
        (f"{VALUES[0][0]}: Yes\n{V2}: Yes\n{V3}: Yes\nValues not reflected: None", [1, 1, 1]),
        # the header left out ("just leave it blank") and a value only listed there
        (f"{V1}: shown at dinner, Yes\n{V3}: No", None),
        (f"{V1}: Yes\n{V2}: No\nValues not reflected: {V2}\n{V3}", [1, 0, 0]),
    ],
)
def test_the_incorporation_check_reads_the_papers_format(reply, want):
    if want is None:
        with pytest.raises(ParseError, match=re.escape(f"no verdict for V2 ({V2})")):
            parse_values_reflected(reply, VALUES)
    else:
        assert parse_values_reflected(reply, VALUES) == want


@pytest.mark.parametrize(
    "reply, message",
    [
        ("", "empty reply"),
        (f"{V1}: the family eats together\n{V2}: Yes\n{V3}: Yes", f"no Yes/No verdict after V1 ({V1})"),
        (f"{V1}: Yes\n{V2}: Yes\n{V3}: Yes\nValues not reflected: {V2}", f"V2 ({V2}) is marked Yes but listed"),
        (f"{V1}: Yes\n{V2}: No\n{V3}: Yes\nValues not reflected:", f"V2 ({V2}) is marked No but not listed"),
        (f"{V1}: Yes\n{V2}: Yes\n{V3}: No\nValues not reflected: Voters take money", "none of the given values"),
    ],
)
def test_a_malformed_incorporation_check_is_a_clear_parse_error(reply, message):
    with pytest.raises(ParseError, match=re.escape(message)):
        parse_values_reflected(reply, VALUES)


@pytest.mark.parametrize(
    "reply, want",
    [
        ("NO", [1, 1, 1]),  # "If there isn't a contradiction, just reply NO."
        (
            f"[Reasoning]:\n[{V1}]:[all the speeches are aligned]\n[{V2}]:[Ravi stays late]\n[Contradictions]:\nNO",
            [1, 1, 1],
        ),
        # the paper's format: the reasoning names every value, only the part after [Contradictions] counts
        (
            f"[Reasoning]:\n{V1}: aligned\n{V2}: Ravi praises overtime\n{V3}: aligned\n[Contradictions]:\n"
            f'[{V2}]: [*Ravi*: "Staying until ten is what a real worker does,\n  my boss says so."]',
            [1, 0, 1],
        ),
        (f"[Contradictions]:\n{V1}: NO\n{V3}: [*Aunt Bisi*: Nobody pays anyone at the polls.]", [1, 1, 0]),
    ],
)
def test_the_consistency_check_reads_the_papers_format(reply, want):
    assert parse_value_contradictions(reply, VALUES) == want


@pytest.mark.parametrize(
    "reply, message",
    [
        ("", "empty reply"),
        (f"{V1}: aligned\n{V2}: aligned", "no [Contradictions] section"),
        ("[Contradictions]:\n[Honesty-agree]: [*Rohit*: keep the change]", "names none of the given values"),
    ],
)
def test_a_malformed_consistency_check_is_a_clear_parse_error(reply, message):
    with pytest.raises(ParseError, match=re.escape(message)):
        parse_value_contradictions(reply, VALUES)


# the paper's own example of the output ("[Final answer]: [Ground truth 1]:1 [Ground truth 2]:0.5")
PAPER_EXAMPLE = "[Reasoning]:\n\n[Ground truth 1]: [reasoning]\n\n.....\n\n[Final answer]:\n\n[Ground truth 1]:1\n\n[Ground truth 2]:0.5"


@pytest.mark.parametrize(
    "reply, n, want",
    [
        (PAPER_EXAMPLE, 2, [1.0, 0.5]),
        ("[Final answer]: [Ground truth 1]:0 [Ground truth 2]: 1 [Ground truth 3]: .5", 3, [0.0, 1.0, 0.5]),
        (
            "[Reasoning]: [Ground truth 1]: predicted 2 fits it, 1\n**Final answer:**\nGround truth 1: 1 (fully)\n",
            1,
            [1.0],
        ),
    ],
)
def test_the_value_extraction_grader_reads_the_papers_format(reply, n, want):
    assert parse_ground_truth_scores(reply, n) == want


@pytest.mark.parametrize(
    "reply, n, message",
    [
        ("[Ground truth 1]:1\n[Ground truth 2]:0.5", 2, "no [Final answer] section"),
        (
            "[Final answer]:\n[Ground truth 1]:1\n[Ground truth 2]:0.7",
            2,
            "ground truth 2 is scored 0.7, not 1, 0.5 or 0",
        ),
        ("[Final answer]:\n[Ground truth 1]:1", 3, "scores no ground truth 2, 3"),
        ("[Final answer]:\n[Ground truth 1]:1\n[Ground truth 4]:0", 1, "ground truth 4 is not one of the 1"),
        ("[Final answer]:\n[Ground truth 1]:1\n[Ground truth 1]:0", 1, "ground truth 1 is scored twice"),
        ("[Final answer]:\n[Ground truth 1]: fully", 1, "no score 1, 0.5 or 0 for ground truth 1"),
    ],
)
def test_a_malformed_grader_reply_is_a_clear_parse_error(reply, n, message):
    with pytest.raises(ParseError, match=re.escape(message)):
        parse_ground_truth_scores(reply, n)


# ------------------------------------------------------------- value-extraction score by hand
VE = "cqbench.value_extraction"


def ve_item(n: int) -> dict:
    return {
        "values": [{"statement": f"Statement {i}.", "attitude": "agree"} for i in range(n)],
        "predicted_values": ["I think so."],
    }


@pytest.mark.parametrize(
    "scores, want",
    [
        # Sec. 4.1: S = 1 fully, 0.5 partially, 0 not mentioned; the story's score is their mean
        # over its ground-truth values (Sec. 2.5 "recall")
        ([1, 0.5, 0, 1, 0.5], 3 / 5),  # (1 + 0.5 + 0 + 1 + 0.5) / 5
        ([1, 1, 1, 1, 1], 1.0),
        ([0, 0, 0, 0, 0], 0.0),
        ([0.5, 0.5, 1], 2 / 3),  # (0.5 + 0.5 + 1) / 3
        ([0.5], 0.5),
    ],
)
def test_the_value_extraction_score_is_the_mean_of_the_per_value_scores(scores, want):
    rubric = Rubric.from_schema(get_preset(VE).rubric)
    derived = rubric.derive(rubric.validate({"value_extraction": scores}, item=ve_item(len(scores))))
    assert derived["ve_score"] == pytest.approx(want, abs=1e-12)


def test_a_grader_reply_becomes_the_scores_and_the_story_score():
    preset = get_preset(VE)
    rubric = Rubric.from_schema(preset.rubric)
    reply = (
        "[Reasoning]:\n[Ground truth 1]: predicted 1 says the same.\n[Ground truth 2]: only the topic.\n"
        "[Ground truth 3]: not mentioned.\n[Ground truth 4]: predicted 2 and 3 together.\n"
        "[Final answer]:\n[Ground truth 1]:1\n[Ground truth 2]:0.5\n[Ground truth 3]:0\n[Ground truth 4]:1"
    )
    answers = formats.read_format_reply(preset.judge_prompt.template, rubric, ve_item(4), reply)
    assert answers == {"value_extraction": [1, 0.5, 0, 1]}
    assert [type(x) for x in answers["value_extraction"]] == [int, float, int, int]  # the options' own values
    assert rubric.derive(rubric.validate(answers, item=ve_item(4)))["ve_score"] == pytest.approx(2.5 / 4)
    with pytest.raises(ParseError, match="scores no ground truth 4"):
        formats.read_format_reply(preset.judge_prompt.template, rubric, ve_item(4), reply.rsplit("\n", 1)[0])


def test_scores_outside_1_half_0_are_refused_by_the_rubric():
    rubric = Rubric.from_schema(get_preset(VE).rubric)
    with pytest.raises(ValueError, match=re.escape("0.7 is not one of 1, 0.5, 0")):
        rubric.validate({"value_extraction": [1, 0.7]}, item=ve_item(2))


# ---------------------------------------------------------------- end to end on loopback
def story_reply(body: dict) -> str | None:
    """A stand-in for GPT-4o on the two CQ-Bench checks: V4 of every story is not reflected and
    V2 is contradicted by "Ravi"; anything else is consistent and reflected."""
    user = body["messages"][-1]["content"]
    listed = user.split("Here are the values to reflect in the story: ", 1)[1]
    values = [line for line in listed.split("\n") if line.strip()][:5]
    if "[Contradictions]" in user:
        return (
            "[Reasoning]:\n"
            + "\n".join(f"[{v}]:[aligned]" for v in values)
            + f"\n[Contradictions]:\n[{values[1]}]: [*Ravi*: no]"
        )
    verdicts = "\n".join(f"{v}: the story shows it, {'No' if k == 3 else 'Yes'}" for k, v in enumerate(values))
    return f"{verdicts}\nValues not reflected: {values[3]}"


@pytest.mark.django_db
def test_the_papers_checks_run_on_a_story_project_and_store_their_verdicts(
    researcher, tmp_path, django_capture_on_commit_callbacks
):
    project = project_with_demo("cqbench.story", researcher, tmp_path)
    n = project.items.count()
    with ChatServer(responder=story_reply) as server:
        params = {"base_url": server.base_url, **FAST}
        incorporation = configuration.create_judge_config(
            project=project,
            name="incorporation",
            backend="openai_chat",
            model_id="gpt-4o",
            prompt_template={"use": "cqbench.incorporation_check"},
            params=params,
        )
        consistency = configuration.create_judge_config(
            project=project,
            name="consistency",
            backend="openai_chat",
            model_id="gpt-4o",
            prompt_template={"use": "cqbench.consistency_check"},
            params=params,
        )
        for config in (incorporation, consistency):
            run = run_all(start(config, django_capture_on_commit_callbacks))
            assert run.status == "done", run.message
        bodies = [r["body"] for r in server.requests]
    assert (incorporation.parser, incorporation.questions) == ("choice", ["reflection"])
    assert (consistency.parser, consistency.questions) == ("choice", ["consistency"])
    assert all("response_format" not in b for b in bodies)  # the paper's text format, not JSON
    assert any("Values not reflected: [Value]" in b["messages"][-1]["content"] for b in bodies)
    stored = {a.item.external_id: a.answers for a in Annotation.objects.filter(rater=incorporation.rater)}
    assert len(stored) == n and all(a == {"reflection": [1, 1, 1, 0, 1]} for a in stored.values())
    stored = [a.answers for a in Annotation.objects.filter(rater=consistency.rater)]
    assert len(stored) == n and all(a == {"consistency": [1, 0, 1, 1, 1]} for a in stored)
    raw = JudgeOutput.objects.filter(run__config=incorporation).first().raw_output
    assert "Values not reflected:" in raw  # what the model said is kept


@pytest.mark.django_db
def test_format_templates_are_checked_when_the_judge_is_created(researcher, tmp_path):
    project = project_with_demo("cqbench.story", researcher, tmp_path)
    check = get_preset("cqbench.story").named_templates["cqbench.incorporation_check"].template
    params = {"base_url": "http://127.0.0.1:9/v1"}
    cases = [
        ({"prompt_template": {"use": "cqbench.incorporation_check"}, "parser": "json"}, "read by its output format"),
        ({"prompt_template": {**check, "question": "naturalness"}}, "naturalness is a scale question"),
        ({"prompt_template": {**check, "question": "nope"}}, "'nope', which is no question of this rubric"),
        ({"prompt_template": {**check, "output_format": "yaml"}}, "unknown output format 'yaml'"),
        (
            {"prompt_template": {"use": "cqbench.incorporation_check"}, "questions": ["consistency"]},
            "answers only reflection",
        ),
    ]
    for k, (kw, message) in enumerate(cases):
        with pytest.raises(DomainError, match=re.escape(message)):
            configuration.create_judge_config(project=project, name=f"j{k}", backend="openai_chat", params=params, **kw)
    assert not project.judge_configs.exists()  # nothing was stored


# four stories x two ground-truth values; people A and B and the judge's scores, by story
VE_PEOPLE = {
    "s1": ([1, 0.5], [1, 0]),
    "s2": ([0, 0], [0, 0.5]),
    "s3": ([1, 1], [0.5, 1]),
    "s4": ([0.5, 0], [0.5, 0]),
}
VE_JUDGE = {"s1": [1, 0.5], "s2": [0, 0], "s3": [1, 1], "s4": [0, 0]}
VE_MODEL = {"s1": "qwen2.5-32b", "s2": "o3-mini", "s3": "qwen2.5-32b", "s4": "o3-mini"}


def grader_reply(body: dict) -> str:
    user = body["messages"][-1]["content"]
    story = re.search(r"prediction for (s\d)", user).group(1)
    final = "\n".join(f"[Ground truth {i}]:{s:g}" for i, s in enumerate(VE_JUDGE[story], start=1))
    return f"[Reasoning]:\n[Ground truth 1]: see predicted value 1\n\n[Final answer]:\n{final}"


@pytest.mark.django_db
def test_the_value_extraction_judge_against_people_in_the_validation_report(
    researcher, django_capture_on_commit_callbacks
):
    people = [make_user("ve-a"), make_user("ve-b")]
    project = make_project(VE, owner=researcher, annotators=people, k=2)
    records = [
        {
            "id": e,
            "values": [{"statement": f"{e} value {i}.", "attitude": "agree"} for i in (1, 2)],
            "predicted_values": [f"the prediction for {e}"],
            "generator": VE_MODEL[e],
        }
        for e in VE_PEOPLE
    ]
    report = importing.import_items(project=project, data=jsonl(records), data_format="jsonl")
    assert report.ok, report.errors
    for a in Assignment.objects.filter(project=project, rater__kind="human").select_related("item", "rater"):
        scores = VE_PEOPLE[a.item.external_id][0 if a.rater.name == "ve-a" else 1]
        annotating.submit_annotation(assignment_id=a.id, rater=a.rater, answers={"value_extraction": scores})
    with ChatServer(responder=grader_reply) as server:
        config = configuration.create_judge_config(
            project=project,
            name="gpt-4o grader",
            backend="openai_chat",
            model_id="gpt-4o",
            params={"base_url": server.base_url, **FAST},
        )
        assert config.prompt_template["output_format"] == "ground_truth_scores"
        assert (config.parser, config.questions) == ("choice", ["value_extraction"])
        run = run_all(start(config, django_capture_on_commit_callbacks))
        user = server.requests[0]["body"]["messages"][-1]["content"]
    assert run.status == "done", run.message
    assert "[Ground truth 1]: s" in user and "value 1.-agree\n[Ground truth 2]: " in user
    stored = {a.item.external_id: a for a in Annotation.objects.filter(rater=config.rater)}
    assert {e: a.answers["value_extraction"] for e, a in stored.items()} == VE_JUDGE
    assert stored["s1"].derived["ve_score"] == pytest.approx(0.75)

    tables = {t.key: t for t in compute_tables(project, bootstrap=0)}
    t = tables["cqbench-value-extraction-judge"]
    judge, people_row = t.rows[0].label, "People (pairs of annotators)"
    assert judge == config.short_label == "gpt-4o"  # the short label (issue 35), not "judge: gpt-4o grader"
    # by hand: the judge equals A on 2+2+2+1 and B on 1+1+1+1 of the 8 (story, value) units
    assert t.cell(judge, t.columns[0]).value == pytest.approx(11 / 16)
    # A and B agree on s1 v1, s2 v1, s3 v2, s4 v1, s4 v2: 5 of 8
    assert t.cell(people_row, t.columns[0]).value == pytest.approx(5 / 8)
    person = np.array([(0.75 + 0.5) / 2, (0 + 0.25) / 2, (1 + 0.75) / 2, (0.25 + 0.25) / 2])
    mine = np.array([0.75, 0.0, 1.0, 0.0])
    assert t.cell(judge, t.columns[1]).value == pytest.approx(float(np.corrcoef(person, mine)[0, 1]))
    assert t.cell(judge, t.columns[2]).value == pytest.approx(mine.mean())
    assert t.cell(people_row, t.columns[2]).value == pytest.approx(person.mean())
    assert t.cell(judge, t.columns[3]).value == 8
    assert "0.864" in t.caption
    by_model = tables["cqbench-value-extraction-by-model"]
    assert by_model.cell("qwen2.5-32b", "People: mean story score").value == pytest.approx((0.625 + 0.875) / 2)
    assert by_model.cell("o3-mini", f"{judge}: mean story score").value == pytest.approx(0.0)
    assert by_model.cell("o3-mini", "n stories").value == 2
    json.dumps([x.to_dict() for x in tables.values()])  # the report's JSON export takes it
