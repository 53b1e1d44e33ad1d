"""Importing pairwise comparisons made elsewhere (issue 36): one record per comparison, ``item,
model_a, model_b, winner, rater`` (optionally ``reason``), CSV or JSONL, for people and for a
judge. Every usual spelling of the winner reads the same; the pair may be listed in either order;
a bad winner is a problem of its line and nothing is written."""

from __future__ import annotations

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation import annotation_import, importing, projects
from annotation.models import Annotation, AnnotationImport, Rater
from annotation.sources.comparisons import WINNER_SPELLINGS, winner_side
from judges.imported import import_judge_outputs
from tests.annotation.factories import jsonl, make_project, make_user

pytestmark = pytest.mark.django_db

ITEMS = [
    {"id": "q1-ab", "prompt": "q1", "model_a": "gpt-4", "response_a": "a1", "model_b": "llama-13b", "response_b": "b1"},
    {
        "id": "q2-ab",
        "prompt": "q2",
        "model_a": "gpt-4",
        "response_a": "a2",
        "model_b": "vicuna-13b",
        "response_b": "b2",
    },
]


@pytest.fixture
def project(researcher):
    p = make_project("arena.preference", owner=researcher, k=2)
    assert importing.import_items(project=p, data=jsonl(ITEMS), data_format="jsonl").ok
    return p


def check(project, text, fmt="comparisons-csv"):
    return annotation_import.check_annotations(project=project, data=text.encode(), data_format=fmt)


def votes(project):
    """{(source rater, item): (stored answer, the item field it names)} of the imported ratings."""
    out = {}
    for a in Annotation.objects.filter(item__project=project).select_related("rater", "item"):
        out[(a.rater.parameters.get("source_id", a.rater.name), a.item.external_id)] = a.answers["preference"]
    return out


# --------------------------------------------------------------------------- the winner's spellings
# every spelling of issue 36 and the Arena's / MT-Bench's files, in the file's order of the pair
SPELLINGS = {
    "model_a": "model_a",
    "Model_A": "model_a",
    "a": "model_a",
    "A": "model_a",
    "1": "model_a",
    "[[A]]": "model_a",
    "model_b": "model_b",
    "b": "model_b",
    "B": "model_b",
    "2": "model_b",
    "tie": "tie",
    "Tie": "tie",
    "0": "tie",
    "C": "tie",
    "tie (bothbad)": "tie",
    "tie (both bad)": "tie",
    "tie (both good)": "tie",
    "tie(bothgood)": "tie",
    "gpt-4": "model_a",  # the winner's own name
    "LLAMA-13B": "model_b",
}


@pytest.mark.parametrize("written, side", SPELLINGS.items())
def test_every_spelling_of_the_winner_reads_as_its_side(written, side):
    assert winner_side(written, "gpt-4", "llama-13b") == side


def test_the_spellings_table_holds_only_three_sides():
    assert set(WINNER_SPELLINGS.values()) == {"model_a", "model_b", "tie"}
    assert winner_side("model_c", "gpt-4", "llama-13b") is None and winner_side("3", "x", "y") is None


@pytest.mark.parametrize("written, side", SPELLINGS.items())
def test_each_spelling_imports_as_the_vote_it_means(project, written, side):
    text = f"item,model_a,model_b,winner,rater\nq1-ab,gpt-4,llama-13b,{written},p1\n"
    plan = check(project, text)
    assert plan.report.ok, plan.report.errors
    expected = {"model_a": "left", "model_b": "right", "tie": "tie"}[side]
    assert [row.answers["preference"] for row in plan.rows] == [expected]


# --------------------------------------------------------------------------- people's comparisons
def run(project, tmp_path, text, fmt="comparisons-csv", name="votes.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    out = io.StringIO()
    call_command("import_annotations", str(project.id), str(path), "--format", fmt, stdout=out)
    return out.getvalue()


def test_comparisons_are_stored_in_the_items_own_order_whatever_the_files(project, tmp_path):
    text = (
        "item,model_a,model_b,winner,rater,reason,rater.nationality\n"
        "q1-ab,gpt-4,llama-13b,model_a,p1,more accurate,Germany\n"
        "q1-ab,llama-13b,gpt-4,model_a,p2,,China\n"  # the pair listed the other way round: llama won
        "q2-ab,gpt-4,vicuna-13b,tie (bothbad),p1,both wrong,Germany\n"
    )
    assert "imported 3 annotations" in run(project, tmp_path, text)
    # left / right name the item's own order (no presentation): left = model_a's answer
    assert votes(project) == {("p1", "q1-ab"): "left", ("p2", "q1-ab"): "right", ("p1", "q2-ab"): "tie"}
    reasons = {
        a.rater.parameters["source_id"]: a.answers["reason"]
        for a in Annotation.objects.filter(item__external_id="q1-ab").select_related("rater")
    }
    assert reasons == {"p1": "more accurate", "p2": None}
    raters = {r.parameters["source_id"]: r.attributes for r in Rater.objects.filter(backend="imported")}
    assert raters["p1"]["nationality"] == "Germany" and raters["p2"]["nationality"] == "China"
    # what the vote means, derived in the item's order: llama-13b (model_b) won p2's vote
    p2 = Annotation.objects.get(item__external_id="q1-ab", rater__parameters__source_id="p2")
    assert (p2.derived["a_wins"], p2.derived["b_wins"], p2.derived["tie"]) == (0, 1, 0)


def test_a_jsonl_file_in_the_arena_s_shape_is_read(project, tmp_path):
    # the Arena's clean_battle records: question_id for the item, judge for the voter, tstamp,
    # and columns the import reads past (turn, anony, language)
    records = [
        {
            "question_id": "q1-ab",
            "model_a": "llama-13b",
            "model_b": "gpt-4",
            "winner": "model_b",
            "judge": "arena_user_9",
            "turn": 1,
            "anony": True,
            "language": "English",
            "tstamp": 1687000000.5,
        },
        {
            "question_id": "q2-ab",
            "model_a": "gpt-4",
            "model_b": "vicuna-13b",
            "winner": "tie (bothbad)",
            "judge": "arena_user_9",
            "turn": 1,
            "anony": True,
            "language": "English",
            "tstamp": 1687000100,
        },
    ]
    assert "imported 2 annotations" in run(project, tmp_path, jsonl(records), "comparisons-jsonl", "battles.jsonl")
    assert votes(project) == {("arena_user_9", "q1-ab"): "left", ("arena_user_9", "q2-ab"): "tie"}
    stored = Annotation.objects.get(item__external_id="q2-ab")
    assert stored.assignment.submitted_at.timestamp() == 1687000100  # the Arena's tstamp


@pytest.mark.parametrize(
    "line, problem",
    [
        ("q2-ab,gpt-4,vicuna-13b,model_c,p1", "line 3: winner 'model_c' is none of model_a, model_b, tie"),
        ("q2-ab,gpt-4,vicuna-13b,,p1", "line 3: no 'winner'"),
        (
            "q2-ab,gpt-4,claude-v1,a,p1",
            "line 3: item 'q2-ab' compares 'gpt-4' (model_a) and 'vicuna-13b' (model_b), not 'gpt-4' and 'claude-v1'",
        ),
        ("q2-ab,gpt-4,gpt-4,a,p1", "line 3: model_a and model_b are both 'gpt-4'"),
        ("q9-zz,gpt-4,vicuna-13b,a,p1", "line 3: unknown item"),
        ("q1-ab,gpt-4,llama-13b,b,p1", "line 3: duplicate: rater 'p1' already rated item 'q1-ab'"),
    ],
)
def test_a_bad_record_is_a_line_numbered_problem_and_nothing_is_written(project, line, problem):
    text = "item,model_a,model_b,winner,rater\nq1-ab,gpt-4,llama-13b,a,p1\n" + line + "\n"
    plan = check(project, text)
    assert not plan.report.ok and plan.rows == []
    assert any(e.startswith(problem) for e in plan.report.errors), plan.report.errors
    assert not Annotation.objects.filter(item__project=project).exists()
    assert not Rater.objects.filter(backend="imported").exists()


def test_the_command_refuses_the_whole_file_with_the_line(project, tmp_path):
    text = "item,model_a,model_b,winner,rater\nq1-ab,gpt-4,llama-13b,a,p1\nq2-ab,gpt-4,vicuna-13b,maybe,p2\n"
    with pytest.raises(CommandError, match="line 3: winner 'maybe'"):
        run(project, tmp_path, text)
    assert not Annotation.objects.filter(item__project=project).exists()


def test_comparisons_need_items_that_name_their_systems(researcher):
    turing = make_project("cqbench.turing", owner=researcher)
    record = {"id": "t0", "human_utterance": "h", "model_utterance": "m"}
    assert importing.import_items(project=turing, data=jsonl([record]), data_format="jsonl").ok
    plan = check(turing, "item,model_a,model_b,winner,rater\nt0,x,y,a,p1\n")
    assert not plan.report.ok and "names no systems" in plan.report.errors[0]


# --------------------------------------------------------------------------- a judge's comparisons
def test_a_judges_comparisons_are_imported_as_its_rater(project):
    records = [
        {"item": "q1-ab", "model_a": "llama-13b", "model_b": "gpt-4", "winner": "[[B]]", "judge": "gpt-4-judge"},
        {"item": "q2-ab", "model_a": "gpt-4", "model_b": "vicuna-13b", "winner": "C", "judge": "gpt-4-judge"},
    ]
    report = import_judge_outputs(
        project=project, data=jsonl(records), data_format="judge-pairs-jsonl", name="GPT-4 (MT-Bench)"
    )
    assert report.ok, report.errors
    got = {a.item.external_id: a.answers["preference"] for a in Annotation.objects.filter(rater__kind="model")}
    assert got == {"q1-ab": "left", "q2-ab": "tie"}  # gpt-4 (the item's model_a) won q1-ab


def test_a_judges_file_holds_one_judge_and_a_bad_winner_refuses_it_whole(project):
    two = "item,model_a,model_b,winner,judge\nq1-ab,gpt-4,llama-13b,a,j1\nq2-ab,gpt-4,vicuna-13b,b,j2\n"
    report = import_judge_outputs(project=project, data=two, data_format="judge-pairs-csv", name="J")
    assert not report.ok and report.errors[0].startswith("line 3: rater 'j2': a judge's file holds one judge's")
    bad = "item,model_a,model_b,winner,judge\nq1-ab,gpt-4,llama-13b,a,j1\nq2-ab,gpt-4,vicuna-13b,3,j1\n"
    report = import_judge_outputs(project=project, data=bad, data_format="judge-pairs-csv", name="J")
    assert not report.ok and report.errors[0].startswith("line 3: winner '3'")
    assert not Annotation.objects.filter(item__project=project).exists()


def test_the_outputs_readers_keep_their_file_types(project):
    from annotation.sources import registry

    assert registry.by_suffix("model")["jsonl"].key == "outputs-jsonl"
    assert registry.by_suffix("model")["csv"].key == "outputs-csv"


# --------------------------------------------------------------------------- who may import
def test_the_api_takes_comparisons_from_the_projects_researchers_only(client, project, researcher):
    url = reverse("api-project-annotation-imports", args=[project.id])
    text = b"item,model_a,model_b,winner,rater\nq1-ab,gpt-4,llama-13b,tie,p1\n"

    def upload():
        return SimpleUploadedFile("votes.csv", text, content_type="text/csv")

    data = {"format": "comparisons-csv"}
    assert client.post(url, {**data, "file": upload()}).status_code in (401, 403)
    annotator = make_user("ann-cmp")
    projects.add_member(project=project, user=annotator, role="annotator")
    client.force_login(annotator)
    assert client.post(url, {**data, "file": upload()}).status_code == 403
    client.force_login(make_user("other-researcher", researcher=True))
    assert client.post(url, {**data, "file": upload()}).status_code == 404
    assert not AnnotationImport.objects.exists()
    client.force_login(researcher)
    resp = client.post(url, {**data, "file": upload()})
    assert resp.status_code == 201, resp.content
    assert json.loads(resp.content)["report"]["annotations_created"] == 1
    assert votes(project) == {("p1", "q1-ab"): "tie"}


def test_the_judge_import_api_takes_a_judges_comparisons_from_researchers_only(client, project, researcher):
    url = reverse("api_judge_import", args=[project.id])
    text = b"item,model_a,model_b,winner,judge\nq1-ab,llama-13b,gpt-4,B,gpt-4-judge\n"

    def upload():
        return SimpleUploadedFile("pairs.csv", text, content_type="text/csv")

    data = {"name": "GPT-4 pairs", "format": "judge-pairs-csv"}
    assert client.post(url, {**data, "file": upload()}).status_code in (401, 403)
    annotator = make_user("ann-judge-cmp")
    projects.add_member(project=project, user=annotator, role="annotator")
    client.force_login(annotator)
    assert client.post(url, {**data, "file": upload()}).status_code == 404
    assert not Rater.objects.filter(backend="imported").exists()
    client.force_login(researcher)
    resp = client.post(url, {**data, "file": upload()})
    assert resp.status_code == 201, resp.content
    stored = Annotation.objects.get(rater__kind="model", item__external_id="q1-ab")
    assert stored.answers["preference"] == "left"  # gpt-4 is the item's model_a
