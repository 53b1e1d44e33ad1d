"""Issue 37, M6: hostile numbers in an uploaded file are a problem of their line (or task), never a
server error, and nothing is written: Label Studio JSON with ``updated_at`` Infinity / 1e20,
``from_name`` 5 / a list / an object and a ``completed_by`` of 5,000 digits; long JSONL times
1e20 / Infinity; Label Studio CSV and JSON-MIN cells with 5,000-digit numbers; a judge's outputs
with a 5,000-digit value; an item's meta holding Infinity. Each attack is the test's input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from annotation import annotation_import, importing
from annotation.models import Annotation, Item, Rater
from judges import imported
from tests.annotation.factories import jsonl, make_project, valueground_records
from tests.curation.helpers import valueground_project

from . import test_import_labelstudio_flat as flat

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
LS = FIXTURES / "labelstudio_valueground.json"
#: longer than Python turns into an int (sys.int_info.default_max_str_digits = 4,300)
DIGITS = "7" * 5000


@pytest.fixture
def project(researcher, tmp_path):
    return valueground_project(researcher, [], tmp_path / "img", n=2, k=1)


def nothing_written(project) -> bool:
    return (
        not Rater.objects.filter(backend="imported", parameters__project=project.id).exists()
        and not Annotation.objects.filter(item__project=project).exists()
    )


def check(project, text: str, fmt: str, **kwargs):
    report = annotation_import.check_annotations(project=project, data=text, data_format=fmt, **kwargs).report
    assert not report.ok
    assert not any("Traceback" in e or "Error" in e for e in report.errors), report.errors
    assert nothing_written(project)
    return report.errors


def label_studio(mutate) -> str:
    tasks = json.loads(LS.read_text())
    mutate(tasks[0]["annotations"][0])
    return json.dumps(tasks, indent=1)


def set_key(key, value):
    return lambda ann: ann.__setitem__(key, value)


def set_from_name(value):
    return lambda ann: ann["result"][0].__setitem__("from_name", value)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (set_key("updated_at", float("inf")), "is not a time"),
        (set_key("updated_at", 1e20), "is not a time"),
        (set_key("updated_at", -1e20), "is not a time"),
        (set_key("updated_at", 1e300), "is not a time"),
        (set_from_name(5), "'from_name' must be a text"),
        (set_from_name(["q1", "q2"]), "'from_name' must be a text"),
        (set_from_name({"name": "q1"}), "'from_name' must be a text"),
    ],
    ids=["updated-inf", "updated-1e20", "updated-minus-1e20", "updated-1e300", "from-5", "from-list", "from-object"],
)
def test_label_studio_json_with_hostile_values_is_a_problem_of_its_annotation(project, mutate, message):
    errors = check(project, label_studio(mutate), "labelstudio", mapping={"quality": "q3"})
    assert any(e.startswith("task 41, annotation 101: ") and message in e for e in errors), errors


def test_a_5000_digit_completed_by_is_invalid_json_at_its_line(project):
    text = label_studio(set_key("completed_by", "__BIG__"))
    line = text[: text.index('"__BIG__"')].count("\n") + 1
    errors = check(project, text.replace('"__BIG__"', DIGITS), "labelstudio", mapping={"quality": "q3"})
    assert errors[0] == f"line {line}: invalid JSON (a number of more than 4300 digits at column 21)", errors


@pytest.mark.parametrize("stamp", ["1e20", "-1e20", "Infinity", "-Infinity", "NaN", DIGITS], ids=lambda s: s[:9])
def test_long_jsonl_times_out_of_range_are_a_problem_of_their_line(project, stamp):
    lines = FIXTURES.joinpath("long_valueground.jsonl").read_text().splitlines()
    lines[1] = lines[1][:-1] + f', "timestamp": {stamp}}}'
    errors = check(project, "\n".join(lines) + "\n", "jsonl")
    assert errors[0].startswith("line 2: "), errors  # (line 1's rating then lacks line 2's answer)
    assert re.search(r"is not a time|not finite|more than 4300 digits", errors[0]), errors


def test_label_studio_csv_cells_with_5000_digit_numbers_are_a_problem_of_their_line(wvs_project):
    text = flat.LS_CSV.read_text()
    lines = text.splitlines()
    assert '[{""rating"":1}]' in lines[1]
    lines[1] = lines[1].replace('[{""rating"":1}]', '[{""rating"":' + DIGITS + "}]").replace(",30.0,", f",{DIGITS},")
    errors = check(wvs_project, "\n".join(lines) + "\n", "labelstudio-csv", mapping={"quality": "q3"})
    assert errors and all(e.startswith("line 2: ") for e in errors), errors


def test_label_studio_json_min_with_a_5000_digit_number_is_invalid_json_at_its_line(wvs_project):
    text = flat.LS_MIN.read_text()
    line = text[: text.index('"rating": 1')].count("\n") + 1
    text = text.replace('"rating": 1', f'"rating": {DIGITS}', 1)
    errors = check(wvs_project, text, "labelstudio-min", item_key="question_id", mapping={"quality": "q3"})
    assert errors[0] == f"line {line}: invalid JSON (a number of more than 4300 digits: column 17)", errors


wvs_project = flat.wvs_project


@pytest.mark.parametrize("value", [DIGITS, f"-{DIGITS}", "Infinity", "1e400"], ids=["digits", "minus", "inf", "1e400"])
def test_judge_outputs_with_a_hostile_value_are_a_problem_of_their_line(project, researcher, value):
    ids = list(Item.objects.filter(project=project).order_by("id").values_list("external_id", flat=True))
    good = {"q1": 2, "q2": 2, "q3": 2, "q4": 1}
    text = json.dumps({"id": ids[0], **good}) + "\n" + json.dumps({"id": ids[1], **good, "clip": 0.5})
    text = text.replace('"clip": 0.5', f'"clip": {value}') + "\n"
    report = imported.import_judge_outputs(
        project=project, data=text, data_format="jsonl", name="hostile", metrics=["clip"], user=researcher
    )
    assert not report.ok and report.errors and report.errors[0].startswith("line 2: "), report.errors
    assert not Rater.objects.filter(kind="model").exists()


def test_judge_outputs_csv_with_a_5000_digit_metric_is_a_short_problem_of_its_line(project, researcher):
    """In a CSV the digits are text; a number past 1e308 is no score, and the message does not
    repeat its 5,000 digits."""
    ids = list(Item.objects.filter(project=project).order_by("id").values_list("external_id", flat=True))
    text = "id,q1,q2,q3,q4,clip\n" + "".join(f"{i},2,2,2,1,{DIGITS}\n" for i in ids)
    report = imported.import_judge_outputs(
        project=project, data=text, data_format="csv", name="hostile", metrics=["clip"], user=researcher
    )
    assert not report.ok and len(report.errors) == 2, report.errors
    assert all(e.startswith(("line 2: score 'clip'", "line 3: score 'clip'")) and len(e) < 120 for e in report.errors)
    assert not Rater.objects.filter(kind="model").exists()
    assert imported._number(int(DIGITS[:400])) is None and imported._number(DIGITS) is None


@pytest.mark.parametrize(
    "meta", ["Infinity", "-Infinity", "NaN", "1e400", DIGITS], ids=["inf", "minus-inf", "nan", "1e400", "digits"]
)
def test_item_meta_with_a_hostile_number_is_refused_with_the_line(researcher, tmp_path, meta):
    project = make_project("valueground.pair_quality", owner=researcher)
    records = valueground_records(tmp_path, n=2)
    records[1]["meta"] = {"score": "__META__"}
    data = jsonl(records).replace('"__META__"', meta)
    report = importing.import_items(project=project, data=data, data_format="jsonl", images=tmp_path)
    assert not report.ok
    assert any(e.startswith("line 2:") and re.search("not finite|4300 digits", e) for e in report.errors), report.errors
    assert not Item.objects.filter(project=project).exists()
