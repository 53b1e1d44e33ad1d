"""Export formats come from one registry (``curation/export_formats.py``, issue 32): a format is
one table class plus one registry line, and nothing else changes.

A toy format (TSV), defined and registered in this module only and removed after each test, is
offered by the export form and the API, runs end to end (page, API, worker job, download) and
leaves the existing formats' files unchanged; adding it needs no migration. The writers, the
views, the API and the model name no format key of their own."""

from __future__ import annotations

import csv
import inspect
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.models import Item
from config.celery import app as celery_app
from core.errors import DomainError
from curation import export_formats, services
from curation.export_formats import ANNOTATIONS, FORMATS, ITEMS, ExportFormat
from curation.exports import export_root, run_export_job
from curation.exports.common import plain_value
from curation.exports.tables import TextTable
from curation.models import Export

from .helpers import FAIL, PASS, REJECT, judge_rates, submit_all, valueground_project

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
BUILT_IN = ["jsonl", "csv", "parquet", "hf"]


def tsv_cell(v: Any) -> str:
    """A TSV cell: text as it is (tabs and line breaks as spaces), None empty, JSON for nested."""
    if v is None:
        return ""
    text = plain_value(v, nested=False)
    return re.sub(r"[\t\r\n]", " ", text if isinstance(text, str) else str(text))


class TsvTable(TextTable):
    """The toy format's table: a header line, then one tab-separated line per row."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fh.write("\t".join(self.names) + "\n")

    def write(self, rows: Sequence[tuple]) -> None:
        self.rows += len(rows)
        self.fh.write("".join("\t".join(tsv_cell(v) for v in r) + "\n" for r in rows))


TSV = ExportFormat(
    key="tsv",
    label="TSV (tab-separated)",
    extension="tsv",
    content_type="text/tab-separated-values",
    contents=(ITEMS, ANNOTATIONS),
    table=f"{__name__}.TsvTable",
)


@pytest.fixture
def tsv_format():
    """The toy format, registered for one test: the one line a new format adds."""
    assert "tsv" not in FORMATS
    FORMATS["tsv"] = TSV
    try:
        yield TSV
    finally:
        del FORMATS["tsv"]


@pytest.fixture
def eager_celery():
    saved = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = saved


@pytest.fixture
def project(researcher, annotators, tmp_path):
    project = valueground_project(researcher, annotators[:3], tmp_path / "img", n=4, k=3)
    items = list(Item.objects.filter(project=project).order_by("id"))
    plan = {items[0].id: PASS, items[1].id: PASS, items[2].id: REJECT, items[3].id: FAIL}
    submit_all(project, lambda item, rater: plan[item.id])
    judge_rates(project, lambda item: PASS)
    services.apply_policy(project=project, user=researcher)
    return project


def client_for(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


def run(project, user, content, fmt, scope="all") -> Export:
    export = run_export_job(
        export=Export.objects.create(project=project, created_by=user, content=content, format=fmt, scope=scope)
    )
    assert export.status == "done", export.message
    return export


def read_tsv(path: Path) -> list[list[str]]:
    return [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]


def jsonl_as_tsv(path: Path) -> list[list[str]]:
    """The JSONL export of the same table, its cells as the toy format writes them."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [list(rows[0])] + [[tsv_cell(v) for v in r.values()] for r in rows]


def test_the_built_in_formats_in_display_order():
    assert list(FORMATS) == BUILT_IN
    assert export_formats.choices()[:3] == [("jsonl", "JSONL"), ("csv", "CSV"), ("parquet", "Parquet")]
    assert str(export_formats.choices()[3][1]) == "Hugging Face datasets folder"
    assert export_formats.serving("revisions") == ["jsonl"] and export_formats.serving("items") == BUILT_IN
    for fmt in FORMATS.values():  # every line names a table class that exists
        assert fmt.table_class().__name__ == fmt.table.rsplit(".", 1)[1]
        assert len(fmt.key) <= Export._meta.get_field("format").max_length


def test_a_format_key_must_fit_the_column_and_serve_something():
    with pytest.raises(ValueError, match="1 to 20 characters"):
        ExportFormat(key="x" * 21, label="X", extension="x", content_type="text/plain", contents=(ITEMS,), table="m.C")
    with pytest.raises(ValueError, match="serves no content"):
        ExportFormat(key="x", label="X", extension="x", content_type="text/plain", contents=(), table="m.C")


def test_the_fixture_removes_the_toy_format(tsv_format):
    assert list(FORMATS) == [*BUILT_IN, "tsv"]
    assert ("tsv", "TSV (tab-separated)") in Export._meta.get_field("format").choices


def test_the_toy_format_is_gone_after_its_test():
    assert "tsv" not in FORMATS and "tsv" not in dict(Export._meta.get_field("format").choices)
    with pytest.raises(DomainError, match="unknown export format 'tsv'"):
        services.start_export(project=None, user=None, content="items", format="tsv")


def test_the_toy_format_is_offered_by_the_form_and_the_api(project, researcher, tsv_format):
    c = client_for(researcher)
    page = c.get(reverse("curation", args=[project.id])).content.decode()
    select = re.search(r'<select name="format">(.*?)</select>', page, re.S).group(1)
    assert re.findall(r'<option value="([^"]+)"', select) == [*BUILT_IN, "tsv"]
    assert '<option value="tsv">TSV (tab-separated)</option>' in select
    schema = c.get("/api/schema/", {"format": "json"}).json()
    help_text = schema["components"]["schemas"]["ExportRequest"]["properties"]["format"]["description"]
    assert help_text == "jsonl | csv | parquet | hf | tsv"


def test_an_export_in_the_toy_format_runs_end_to_end(
    project, researcher, tsv_format, django_capture_on_commit_callbacks, eager_celery
):
    c = client_for(researcher)
    del FORMATS["tsv"]  # an existing format's file without the toy format, for comparison below
    before = run(project, researcher, "items", "csv")
    FORMATS["tsv"] = tsv_format
    # the page's form starts the items export; the worker (eager here) writes it
    with django_capture_on_commit_callbacks(execute=True):
        r = c.post(
            reverse("curation_export_start", args=[project.id]), {"content": "items", "format": "tsv", "scope": "all"}
        )
    assert r.status_code == 302
    items = Export.objects.get(format="tsv", content="items")
    assert items.status == "done", items.message
    assert [f["name"] for f in items.files] == ["items.tsv", "provenance.json"]
    assert items.get_format_display() == "TSV (tab-separated)"
    got = read_tsv(export_root(items) / "items.tsv")
    want = jsonl_as_tsv(export_root(run(project, researcher, "items", "jsonl")) / "items.jsonl")
    assert got == want and len(got) == 1 + Item.objects.filter(project=project).count()
    assert items.files[0]["rows"] == len(got) - 1 and "q1__latent_label" in got[0]
    prov = json.loads((export_root(items) / "provenance.json").read_text())
    assert prov["export"]["format"] == "tsv" and prov["export"]["id"] == items.id
    download = c.get(reverse("curation_export_download", args=[items.id]))
    assert download["Content-Type"] == "text/tab-separated-values"
    assert b"".join(download.streaming_content).decode().splitlines()[0] == "\t".join(got[0])

    # the API starts the long annotations table (no line encoder: the table gets the rows)
    with django_capture_on_commit_callbacks(execute=True):
        r = c.post(
            f"/api/projects/{project.id}/exports/",
            {"content": "annotations", "format": "tsv", "scope": "all"},
            content_type="application/json",
        )
    assert r.status_code == 202, r.content
    detail = c.get(f"/api/exports/{r.json()['id']}/").json()
    assert detail["status"] == "done" and detail["format"] == "tsv"
    names = [f["name"] for f in detail["files"]]
    assert names == ["annotations.tsv", "annotation_history.tsv", "provenance.json"]
    annotations = Export.objects.get(pk=detail["id"])
    got = read_tsv(export_root(annotations) / "annotations.tsv")
    reference = run(project, researcher, "annotations", "jsonl")
    want = jsonl_as_tsv(export_root(reference) / "annotations.jsonl")
    # rater pseudonyms are salted per export: compare the rest of every row
    rater = want[0].index("rater")
    assert [r[:rater] + r[rater + 1 :] for r in got] == [r[:rater] + r[rater + 1 :] for r in want]
    assert len(got) > 20 and len({r[rater] for r in got[1:]}) == 4  # 3 annotators + the judge

    # the existing formats are unaffected by the new one: the same bytes, the same columns
    after = run(project, researcher, "items", "csv")
    assert (export_root(after) / "items.csv").read_bytes() == (export_root(before) / "items.csv").read_bytes()
    with open(export_root(after) / "items.csv", newline="", encoding="utf-8") as fh:
        assert next(csv.reader(fh)) == read_tsv(export_root(items) / "items.tsv")[0]


def test_what_a_format_does_not_serve_is_refused(project, researcher, tsv_format):
    with pytest.raises(DomainError, match="the tsv format exports items / annotations; use jsonl for revisions"):
        services.start_export(project=project, user=researcher, content="revisions", format="tsv")
    with pytest.raises(DomainError, match="the Hugging Face folder format exports items; use jsonl for revisions"):
        services.start_export(project=project, user=researcher, content="revisions", format="hf")
    with pytest.raises(DomainError, match="exports items; use jsonl, csv, parquet or tsv for annotations"):
        services.start_export(project=project, user=researcher, content="annotations", format="hf")
    assert not Export.objects.exists()


def test_the_model_validates_against_the_registry(project, researcher, tsv_format):
    Export(project=project, created_by=researcher, content="items", format="tsv").full_clean()
    with pytest.raises(ValidationError, match="unknown export format 'xlsx'"):
        Export(project=project, created_by=researcher, content="items", format="xlsx").full_clean()
    with pytest.raises(ValidationError, match="use jsonl for revisions"):
        Export(project=project, created_by=researcher, content="revisions", format="csv").full_clean()


def test_a_registered_format_needs_no_migration(tsv_format):
    # exits non-zero (SystemExit) when the models differ from the migrations
    call_command("makemigrations", "curation", check=True, dry_run=True, verbosity=0)


#: what may name a format key: the registry and the migrations (history)
FORMAT_KEY = re.compile(r"""["'](jsonl|csv|parquet|hf)["']""")


def test_no_writer_view_api_or_model_names_a_format_key():
    sources = {
        str(p.relative_to(ROOT)): p.read_text()
        for p in [
            *sorted((ROOT / "curation" / "exports").glob("*.py")),
            ROOT / "curation" / "models.py",
            ROOT / "curation" / "views.py",
            ROOT / "curation" / "api.py",
            *sorted((ROOT / "templates" / "curation").glob("*.html")),
        ]
    }
    sources["curation.services.start_export"] = inspect.getsource(services.start_export)
    found = {name: FORMAT_KEY.findall(text) for name, text in sources.items() if FORMAT_KEY.search(text)}
    assert found == {}
    assert FORMAT_KEY.search((ROOT / "curation" / "export_formats.py").read_text())  # the check can see one
