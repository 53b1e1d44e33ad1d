"""PPI++ with numbers on first contact (issue 34): in every demo study the judges rate the whole
pool and people a sample of it, so the validation report's PPI mean, lambda and judge-only items
have values on every field where PPI applies, and each judge's one answer carries a headline of
human labels saved. Each figure is checked against a recomputation written out here with numpy
from Angelopoulos, Duchi and Zrnic, "PPI++: Efficient Prediction-Powered Inference"
(arXiv:2311.01453, 2023), the power-tuned estimator and its optimal lambda specialised to the
mean: lambda* = Cov(Y, f) / ((1 + n/N) Var(f)) (clipped to [0, 1]), theta = lambda mean(f(X~)) +
mean(Y - lambda f(X)), and its variance lambda^2 Var(f(X~)) / N + Var(Y - lambda f(X)) / n;
below 100 labelled items HV fixes lambda = N / (n + N), lambda* when Cov(Y, f) = Var(f);
labels saved = the human-rated items a human-only mean needs for that variance, Var(Y) / se^2
rounded up, minus n."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from agreement import selectors
from agreement.validation import compute_tables, main_fields, project_answers
from annotation.models import Project
from demo.studies import PREFIX
from judges.models import JudgeConfig

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(shared_demo, db):
    """The demo, seeded once for the class (tests/conftest.py, shared_demo), read afresh."""
    return list(Project.objects.filter(name__startswith=PREFIX).order_by("id"))


def ppi_by_hand(frame: pd.DataFrame, field: str, judge: str) -> dict[str, float] | None:
    """PPI++ for the mean of ``field`` with ``judge`` as predictor, from the long ratings table:
    Y = the mean human rating of an item, f = the judge's rating; labelled = items with both,
    unlabelled = items the judge alone rated. None for a field that is not numeric."""
    sub = frame[(frame["field"] == field) & (frame["item"] == frame["item_pk"].astype(str))]
    values = pd.to_numeric(sub["value"], errors="coerce")
    if values.isna().any():
        return None
    human = sub["rater_kind"] == "human"
    y = values[human].groupby(sub.loc[human, "item_pk"]).mean()
    mine = sub["rater"] == judge
    f = values[mine].groupby(sub.loc[mine, "item_pk"]).first()
    labelled = sorted(set(y.index) & set(f.index))
    unlabelled = sorted(set(f.index) - set(y.index))
    Y, F, Fu = y[labelled].to_numpy(), f[labelled].to_numpy(), f[unlabelled].to_numpy()
    n, N = len(Y), len(Fu)
    cov = np.mean((Y - Y.mean()) * (F - F.mean()))
    var_f = np.var(np.concatenate([F, Fu]), ddof=1)
    if var_f == 0:
        lam = 0.0
    elif n < 100:  # HV's small-sample rule (hvstats.ppi "Small samples"): the calibrated-judge optimum
        lam = N / (n + N)
    else:
        lam = float(np.clip(cov / ((1 + n / N) * var_f), 0.0, 1.0))
    theta = lam * Fu.mean() + np.mean(Y - lam * F)
    se2 = lam**2 * np.var(Fu) / N + np.var(Y - lam * F) / n
    saved = math.ceil(np.var(Y) / se2 - 1e-9) - n
    return {"lambda": lam, "estimate": float(theta), "n": n, "N": N, "saved": saved}


class TestPPIOnTheDemo:
    def test_every_study_has_ppi_numbers_and_labels_saved_as_recomputed(self, demo):
        assert len(demo) == 10
        checked = with_ppi = 0
        for project in demo:
            frame = selectors.ratings_frame(project)
            raters_by_label = {
                c.short_label: c.rater.name for c in JudgeConfig.objects.filter(project=project).select_related("rater")
            }
            tables = {t.key: t for t in compute_tables(project, bootstrap=0)}
            verdicts = tables["judge-verdicts"]
            col = {c: k for k, c in enumerate(verdicts.columns)}
            judges = sorted(frame.loc[frame["rater_kind"] == "model", "rater"].unique().tolist())
            fields = main_fields(list(dict.fromkeys(frame["field"].tolist())))
            applies = 0
            for row in verdicts.rows:
                ppi = row.cells[col["PPI mean"]]
                if ppi.value is None and ppi.note == "PPI applies to numeric and two-label fields":
                    continue
                applies += 1
                # no dash where PPI applies: an estimate, lambda, judge-only items, labels saved
                assert ppi.value is not None and ppi.ci is not None, (project.name, row.label, ppi.note)
                assert row.cells[col["λ"]].value is not None, (project.name, row.label)
                assert row.cells[col["Judge-only items"]].value > 0, (project.name, row.label)
                assert row.cells[col["Human labels saved (PPI++)"]].value is not None, (project.name, row.label)
                label, field = row.label.rsplit(": ", 1)
                judge = raters_by_label.get(label, label)  # the table names a judge by its short label
                if field not in fields or "[" in field:
                    continue
                mine = ppi_by_hand(frame, field, judge)
                if mine is None:
                    continue
                checked += 1
                assert row.cells[col["λ"]].value == pytest.approx(mine["lambda"], abs=1e-9), (project.name, row.label)
                assert ppi.value == pytest.approx(mine["estimate"], abs=1e-9), (project.name, row.label)
                assert row.cells[col["Human-rated items"]].value == mine["n"]
                assert row.cells[col["Judge-only items"]].value == mine["N"]
                assert row.cells[col["Human labels saved (PPI++)"]].value == mine["saved"], (project.name, row.label)
            with_ppi += bool(applies)
            # the headline per judge: the fewest saved over its fields, in the answer and its table
            answers = {a["judge"]: a for a in project_answers(project)}
            assert set(answers) == set(judges), project.name
            # the table names each judge by its short label; the answers and the frame by rater name
            answer_rows = {raters_by_label.get(r.label, r.label): r for r in tables["judge-answers"].rows}
            for judge, a in answers.items():
                saved = a["labels_saved"]
                if not applies:  # no field PPI applies to (Turing pairs, pairwise preference: left / right / tie)
                    assert saved is None and answer_rows[judge].cells[-1].value is None
                    continue
                assert saved is not None and saved["items"] is not None, (project.name, judge)
                assert saved["items"] == min(saved["per_field"].values())
                field = saved["field"]
                if "[" not in field and (mine := ppi_by_hand(frame, field, judge)) is not None:
                    assert saved["items"] == mine["saved"], (project.name, judge, field)
                cells = answer_rows[judge].cells
                assert cells[-1].value == saved["items"], (project.name, judge)
        # PPI applies to every preset but the Turing pairs and the pairwise preference (three-way choices)
        assert with_ppi == 8 and checked >= 8, (with_ppi, checked)

    def test_the_headline_shows_on_the_printable_report_and_in_the_api(self, demo):
        from django.contrib.auth import get_user_model
        from django.test import Client
        from django.urls import reverse

        project = next(p for p in demo if p.preset_key == "valueground.pair_quality")
        c = Client()
        c.force_login(get_user_model().objects.get(username="researcher"))
        html = c.get(reverse("printable_report", args=[project.id]), {"bootstrap": "0"}).content.decode()
        assert html.count('data-testid="labels-saved"') == 2, "one headline per judge"
        assert "Human labels saved with PPI++ on this pool" in html
        body = c.get(reverse("api_validation_report", args=[project.id]), {"format": "json", "bootstrap": "0"}).json()
        assert all(a["labels_saved"]["items"] is not None for a in body["answers"])
        assert any(t["key"] == "judge-answers" and "Human labels saved (PPI++)" in t["columns"] for t in body["tables"])
        # an annotator of the study sees neither (researchers only)
        c.force_login(get_user_model().objects.get(username="annotator1"))
        assert c.get(reverse("printable_report", args=[project.id])).status_code == 403
        assert c.get(reverse("api_validation_report", args=[project.id])).status_code == 403
