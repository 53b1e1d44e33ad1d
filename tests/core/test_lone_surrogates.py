"""Issue 37, H2: text is valid Unicode everywhere it is stored. JSON's ``"\\udc00"`` escape parses
to a lone UTF-16 surrogate; an annotator stored one through the API (the answer 500, the row kept
on SQLite) and every annotation export of the project then failed with UnicodeEncodeError. Each
writer now refuses it with a clear 400 or a problem by line (``core.values.value_problem``, the
API's JSON parser ``core.parsers``), a judge's output keeps U+FFFD instead, and the migration
``annotation/0014`` repairs rows stored before."""

from __future__ import annotations

import base64
import importlib
import json
from pathlib import Path

import pytest
from django.apps import apps as current_apps
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DataError, connection, transaction
from django.test import Client

from annotation import importing
from annotation.models import Annotation, Assignment, Item, Rater
from core.errors import DomainError
from core.parsers import surrogate_problem
from core.values import REPLACEMENT, value_problem, without_surrogates
from curation.exports import export_root, run_export_job
from curation.models import Export
from judges import configuration, imported, runs, tasks
from judges.backends.openai_chat import OpenAIChatBackend
from judges.models import JudgeOutput
from tests.annotation.conftest import media_root  # noqa: F401  (a shared fixture: media in tmp_path)
from tests.annotation.factories import jsonl, make_user, valueground_records
from tests.curation.helpers import PASS, valueground_project
from tests.judges.chat_server import ChatServer
from tests.judges.helpers import project_with_demo

pytestmark = pytest.mark.django_db

LONE = "\udc00"
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
VG = {"q1": 2, "q2": 1, "q3": 0, "q4": 1}
SURROGATE_MESSAGE = "lone UTF-16 surrogate"


@pytest.fixture
def researcher(db):
    return make_user("res", researcher=True)


@pytest.fixture
def annotator(db):
    return make_user("ann1")


@pytest.fixture
def project(researcher, annotator, tmp_path):
    return valueground_project(researcher, [annotator], tmp_path / "img", n=3, k=1)


def queue(project, user) -> list[int]:
    return list(
        Assignment.objects.filter(project=project, rater__user=user)
        .order_by("position", "id")
        .values_list("id", flat=True)
    )


def body(answers: dict) -> str:
    text = json.dumps({"answers": answers})
    assert "\\udc00" in text  # the attack: the escape, as a client sends it
    return text


def nothing_submitted(project) -> bool:
    return (
        not Annotation.objects.filter(item__project=project).exists()
        and not Assignment.objects.filter(project=project, status=Assignment.Status.SUBMITTED).exists()
    )


# ------------------------------------------------------------------------------- the one rule
def test_value_problem_names_a_lone_surrogate_in_a_text_or_a_key():
    assert SURROGATE_MESSAGE in value_problem({"a": ["ok", "x" + LONE]})
    assert SURROGATE_MESSAGE in value_problem({"k\ud800": 1}) and "a key" in value_problem({"k\ud800": 1})
    assert SURROGATE_MESSAGE in value_problem(json.loads('"\\uDFFF"'))
    assert value_problem(json.loads('"\\ud83d\\ude00"')) is None  # a valid pair: one emoji
    assert value_problem({"text": "Grüße 😀 \ufffd"}) is None
    assert surrogate_problem([{"k": LONE}]) and surrogate_problem({"x": "😀"}) is None


def test_without_surrogates_replaces_only_the_lone_ones():
    assert without_surrogates({"a" + LONE: ["x" + LONE + "😀", 1, None]}) == {
        "a" + REPLACEMENT: ["x" + REPLACEMENT + "😀", 1, None]
    }
    clean = {"a": ["b"]}
    assert without_surrogates(clean) == clean


# ---------------------------------------------------------------------------- annotators' writes
@pytest.mark.parametrize("lean", [True, False])
def test_a_submit_with_a_lone_surrogate_is_refused_with_400_and_stores_nothing(project, annotator, settings, lean):
    settings.HV_LEAN_API = lean
    c = Client(enforce_csrf_checks=True, raise_request_exception=False)
    c.force_login(annotator)
    c.cookies["csrftoken"] = "t" * 32
    first = queue(project, annotator)[0]
    url = f"/api/assignments/{first}/submit/"
    for answers in ({**VG, "feedback": "bad" + LONE + "text"}, {**VG, "q1" + LONE: 1}):
        resp = c.post(url, body(answers), content_type="application/json", HTTP_X_CSRFTOKEN="t" * 32)
        assert resp.status_code == 400, resp.content
        assert SURROGATE_MESSAGE in resp.content.decode()
    assert nothing_submitted(project)
    # the same assignment then takes a valid answer, and the annotator's pages still load
    ok = c.post(
        url,
        json.dumps({"answers": {**VG, "feedback": "fine 😀"}}),
        content_type="application/json",
        HTTP_X_CSRFTOKEN="t" * 32,
    )
    assert ok.status_code == 201, ok.content
    assert c.get(f"/api/assignments/{first}/").status_code == 200


def test_http_basic_and_edits_and_skips_are_refused_too(project, annotator):
    c = Client(raise_request_exception=False)
    c.defaults["HTTP_AUTHORIZATION"] = "Basic " + base64.b64encode(b"ann1:pw-ann1").decode()
    ids = queue(project, annotator)
    resp = c.post(f"/api/assignments/{ids[0]}/submit/", body({**VG, "feedback": LONE}), content_type="application/json")
    assert resp.status_code == 400 and SURROGATE_MESSAGE in resp.content.decode()
    resp = c.post(
        f"/api/assignments/{ids[1]}/skip/", json.dumps({"reason": "x" + LONE}), content_type="application/json"
    )
    assert resp.status_code == 400 and SURROGATE_MESSAGE in resp.content.decode()
    assert Assignment.objects.get(pk=ids[1]).skip_reason == ""
    assert (
        c.post(
            f"/api/assignments/{ids[0]}/submit/", json.dumps({"answers": VG}), content_type="application/json"
        ).status_code
        == 201
    )
    resp = c.put(f"/api/assignments/{ids[0]}/answer/", body({**VG, "feedback": LONE}), content_type="application/json")
    assert resp.status_code == 400 and SURROGATE_MESSAGE in resp.content.decode()
    assert Annotation.objects.get(assignment_id=ids[0]).answers.get("feedback") is None


def test_every_api_body_is_refused_when_it_holds_one(researcher, client):
    client.force_login(researcher)
    resp = client.post(
        "/api/projects/",
        json.dumps({"name": "p" + LONE, "preset": "valueground.pair_quality"}),
        content_type="application/json",
    )
    assert resp.status_code == 400 and SURROGATE_MESSAGE in resp.content.decode()


@pytest.mark.parametrize("lean", [True, False])
def test_the_web_form_cannot_carry_one(project, annotator, settings, lean):
    """A form's bytes are decoded by Django with U+FFFD for what is not UTF-8: the bytes a
    surrogate would have in UTF-8 (ED B0 80) arrive as replacement characters, never as one."""
    settings.HV_LEAN_API = lean
    c = Client()
    c.force_login(annotator)
    first = queue(project, annotator)[0]
    form = "q1=2&q2=1&q3=0&q4=1&mode=submit&feedback=bad%ED%B0%80text"
    resp = c.post(f"/a/{first}/", form, content_type="application/x-www-form-urlencoded")
    assert resp.status_code in (200, 302), resp.status_code
    stored = Annotation.objects.get(assignment_id=first)
    assert value_problem(stored.answers) is None and stored.answers["feedback"].startswith("bad\ufffd")


def test_an_expression_cannot_write_one_into_derived_fields():
    from annotation.expressions import Expression, ExpressionError

    with pytest.raises(ExpressionError, match=SURROGATE_MESSAGE):
        Expression('feedback + "\\udc00"')


# ------------------------------------------------------------------------------------- imports
def test_an_item_import_is_refused_with_the_line(project, tmp_path):
    records = valueground_records(tmp_path, n=2)
    for r in records:
        r["id"] = "new-" + r["id"]
    records[1]["meta"] = {"note": "a" + LONE}
    before = Item.objects.filter(project=project).count()
    report = importing.import_items(project=project, data=jsonl(records), data_format="jsonl", images=tmp_path)
    assert not report.ok and any(e.startswith("line 2:") and SURROGATE_MESSAGE in e for e in report.errors), (
        report.errors
    )
    assert Item.objects.filter(project=project).count() == before


def ls_file(tmp_path, where: str) -> Path:
    tasks_ = json.loads((FIXTURES / "labelstudio_valueground.json").read_text())
    first = tasks_[0]["annotations"][0]
    if where == "answer":
        feedback = next(r for r in first["result"] if r["from_name"] == "feedback")
        feedback["value"]["text"] = ["Both images", "look" + LONE + "fine"]
    else:
        first["completed_by"] = "rater" + LONE
    path = tmp_path / f"ls-{where}.json"
    path.write_text(json.dumps(tasks_))  # json.dumps writes the escape, as Label Studio would
    assert "\\udc00" in path.read_text()
    return path


@pytest.mark.parametrize("where", ["answer", "rater"])
def test_a_label_studio_import_is_refused_by_task_and_writes_nothing(researcher, tmp_path, where):
    project = valueground_project(researcher, [], tmp_path / "img", n=4, k=3)
    with pytest.raises(CommandError) as exc:
        call_command(
            "import_annotations",
            str(project.id),
            str(ls_file(tmp_path, where)),
            "--format",
            "labelstudio",
            "--map",
            "quality=q3",
        )
    assert f"task 41, annotation 101: text holds a {SURROGATE_MESSAGE}" in str(exc.value)
    assert not Annotation.objects.filter(item__project=project).exists()
    assert not Rater.objects.filter(backend="imported", kind="human").exists()


def test_a_judge_output_import_is_refused_with_the_line(project, researcher):
    ext = list(Item.objects.filter(project=project).order_by("id").values_list("external_id", flat=True))
    lines = [json.dumps({"id": ext[0], **PASS}), json.dumps({"id": ext[1] + LONE, **PASS})]
    report = imported.import_judge_outputs(
        project=project, data="\n".join(lines) + "\n", data_format="jsonl", name="j", user=researcher
    )
    assert not report.ok and any(e.startswith("line 2:") and SURROGATE_MESSAGE in e for e in report.errors), (
        report.errors
    )
    assert not Rater.objects.filter(kind="model").exists()


def test_a_profile_attribute_holding_one_is_refused():
    from accounts import invitations

    with pytest.raises(DomainError, match=SURROGATE_MESSAGE):
        invitations.parse_attributes("region = x" + LONE)


# ------------------------------------------------------------------------------ a judge's text
def test_a_judge_output_keeps_the_replacement_character(
    researcher, tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    project = project_with_demo("cultivate.faithfulness", researcher, tmp_path, n=2)
    real = OpenAIChatBackend.judge

    def hostile(self, items, passes):
        verdicts = real(self, items, passes)
        for v in verdicts:  # what an endpoint answering "\udc00" in its JSON would give
            v.raw = (v.raw or "") + LONE
            if v.answers:
                v.answers = {k: (x + LONE if isinstance(x, str) else x) for k, x in v.answers.items()}
        return verdicts

    monkeypatch.setattr(OpenAIChatBackend, "judge", hostile)
    fast = {"backoff_s": 0.01, "max_backoff_s": 0.05, "timeout_s": 2, "max_retries": 1}
    with ChatServer() as server:
        config = configuration.create_judge_config(
            project=project, name="j", backend="openai_chat", model_id="m", params={**fast, "base_url": server.base_url}
        )
        with django_capture_on_commit_callbacks(execute=False):
            run = runs.start_judge_run(config=config, chunk_size=2)
        tasks.run_judge_chunk(run.id, run.item_ids)
    outputs = list(JudgeOutput.objects.filter(run=run))
    assert outputs and all(o.raw_output.endswith(REPLACEMENT) for o in outputs)
    assert all(value_problem([o.raw_output, o.parsed, o.error]) is None for o in outputs)
    for a in Annotation.objects.filter(item__project=project, rater__kind="model"):
        assert value_problem([a.answers, a.derived]) is None


# ----------------------------------------------------------------- rows stored before: repaired
def repair() -> None:
    migration = importlib.import_module("annotation.migrations.0014_repair_lone_surrogates")

    class Editor:
        pass

    editor = Editor()
    editor.connection = connection
    migration.repair(current_apps, editor)


def export_annotations(project, user) -> Export:
    export = Export.objects.create(project=project, created_by=user, content="annotations", format="csv", scope="all")
    return run_export_job(export=export)


def test_stored_surrogates_are_repaired_and_the_export_works_again(project, annotator, researcher):
    first = queue(project, annotator)[0]
    c = Client()
    c.force_login(annotator)
    assert (
        c.post(
            f"/api/assignments/{first}/submit/",
            json.dumps({"answers": {**VG, "feedback": "ok 😀"}}),
            content_type="application/json",
        ).status_code
        == 201
    )
    annotation = Annotation.objects.get(assignment_id=first)
    item = annotation.item
    poisoned = {**annotation.answers, "feedback": "bad" + LONE + " 😀"}
    if connection.vendor == "postgresql":
        # JSONB cannot hold one: the row an attacker was after is refused by the database itself,
        # which is why the migration has nothing to read there
        with pytest.raises(DataError), transaction.atomic():
            Annotation.objects.filter(pk=annotation.pk).update(answers=poisoned)
        return
    # SQLite stores it (as the escape): the state of a database attacked before this fix
    Annotation.objects.filter(pk=annotation.pk).update(answers=poisoned, derived={"x" + LONE: 1})
    Item.objects.filter(pk=item.pk).update(meta={**item.meta, "note": LONE})
    Rater.objects.filter(pk=annotation.rater_id).update(attributes={"region": "r" + LONE})
    assert export_annotations(project, researcher).status == "failed"  # the finding, reproduced
    repair()
    annotation.refresh_from_db()
    assert annotation.answers["feedback"] == "bad" + REPLACEMENT + " 😀"  # the valid pair kept
    assert annotation.derived == {"x" + REPLACEMENT: 1}
    assert Item.objects.get(pk=item.pk).meta["note"] == REPLACEMENT
    assert Rater.objects.get(pk=annotation.rater_id).attributes == {"region": "r" + REPLACEMENT}
    export = export_annotations(project, researcher)
    assert export.status == "done", export.message
    text = (export_root(export) / "annotations.csv").read_text(encoding="utf-8")
    assert "bad" + REPLACEMENT + " 😀" in text
    assert c.get(f"/api/assignments/{first}/").status_code == 200
