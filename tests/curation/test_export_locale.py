"""The wording each answer was given under (``Annotation.locale``, issue 14) is a column of the
long annotations export, next to the annotation's own columns, in every format."""

from __future__ import annotations

import pandas as pd
import pytest

from annotate import annotating
from annotation.models import Annotation, Assignment
from curation.exports import export_root, run_export_job
from curation.models import Export

from .helpers import PASS, judge_rates, valueground_project

pytestmark = pytest.mark.django_db

#: the wording each annotator answered in: the Chinese and German translations, the paper's
#: English, and an API client that did not say
LOCALES = {"ann1": "zh-hans", "ann2": "de", "ann3": "en", "ann4": ""}


@pytest.fixture
def project(researcher, annotators, tmp_path):
    project = valueground_project(researcher, annotators, tmp_path / "img", n=2, k=4)
    for a in Assignment.objects.filter(project=project).select_related("rater"):
        annotating.submit_annotation(assignment_id=a.id, rater=a.rater, answers=PASS, locale=LOCALES[a.rater.name])
    judge_rates(project, lambda item: PASS)
    return project


READ = {
    "jsonl": lambda p: pd.read_json(p, lines=True, dtype=False),
    "csv": lambda p: pd.read_csv(p, dtype=str, keep_default_na=False),
    "parquet": pd.read_parquet,
}


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_the_locale_is_a_column_of_every_annotation_row(project, researcher, fmt):
    export = run_export_job(
        export=Export.objects.create(
            project=project, created_by=researcher, content="annotations", format=fmt, scope="all"
        )
    )
    assert export.status == "done", export.message
    df = READ[fmt](export_root(export) / f"annotations.{fmt}")
    columns = list(df.columns)
    assert columns[columns.index("annotation_revision") + 1] == "locale"  # next to the annotation's own columns
    humans = df[df["rater_kind"] == "human"]
    # per rater (pseudonymous in the export): one wording on all its rows, the stored one
    per_rater = humans.groupby("rater")["locale"].agg(lambda s: set(s.fillna("")))
    assert sorted(next(iter(v)) for v in per_rater) == sorted(LOCALES.values())
    assert all(len(v) == 1 for v in per_rater)
    stored = sorted(
        Annotation.objects.filter(item__project=project, rater__kind="human").values_list("locale", flat=True)
    )
    assert sorted(humans.drop_duplicates(["item", "rater"])["locale"].fillna("")) == stored
    assert set(df[df["rater_kind"] == "model"]["locale"].fillna("")) == {
        ""
    }  # judges: the column is what a person was shown
