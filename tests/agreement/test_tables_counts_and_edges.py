"""Issue 22, findings 4-6: every judge column says how many items it stands on; degenerate
inputs say so in the verdict cell (the value stays the reference's); a share with zero or all
events gets an exact (Clopper-Pearson) interval; epsilon is accepted in the same range by the
``agreement`` and ``validation_report`` commands and the API; captions say which items each
figure uses. Checked against independent computations (numpy / scipy / statsmodels)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from statsmodels.stats.proportion import proportion_confint

from agreement import validation
from agreement.services import ReportParams
from annotate import annotating
from annotation.models import Assignment, Item, Rater
from core.errors import DomainError
from hvstats.report import judge_verdicts
from hvstats.tables import Cell, format_cell
from hvstats.validation import share
from hvstats.verdicts import verdicts_table
from tests.agreement import test_paper_tables as paper
from tests.agreement.test_paper_tables import VG_FIELDS, eq8, pearson, spearman, submit_judge

pytestmark = pytest.mark.django_db
TOL = 1e-9
env = paper._env
valueground = paper.valueground


def close(a, b) -> bool:
    return a is not None and b is not None and abs(a - b) <= TOL


# ------------------------------------------------------------------------------ 4: n per judge
def test_every_judge_column_carries_its_own_n(valueground):
    project, ids, humans, judges, pos = valueground
    a, b = judges["judge-a"], judges["judge-b"]
    submit_judge(project, "judge-a", lambda e: {f: int(a[f][pos[e]]) for f in VG_FIELDS})
    rated = ids[:30]  # the second judge rated 30 of the 36 items
    jb = Rater.objects.create(kind=Rater.Kind.MODEL, name="judge-b", backend="openai_chat", model_id="b")
    for item in Item.objects.filter(project=project, external_id__in=rated):
        asg = Assignment.objects.create(project=project, item=item, rater=jb, presentation={})
        annotating.submit_annotation(
            assignment_id=asg.id, rater=jb, answers={f: int(b[f][pos[item.external_id]]) for f in VG_FIELDS}
        )
    t4 = validation.compute_tables(project, bootstrap=0, seed=0)[0]
    names = [u for u, _ in paper.VG_ANNOTATORS]
    sel = [pos[e] for e in rated]
    for label, f in (("Q1", "q1"), ("Q3", "q3"), ("Total", "total")):
        assert t4.cell(label, "judge-a vs mean human: n").value == 36
        assert t4.cell(label, "judge-b vs mean human: n").value == 30
        assert t4.cell(label, "n").value == 36
        if f == "total":
            H = np.column_stack([eq8(*(humans[u][q] for q in VG_FIELDS)) for u in names])
            jv = eq8(*(b[q] for q in VG_FIELDS))
        else:
            H = np.column_stack([humans[u][f] for u in names]).astype(float)
            jv = b[f].astype(float)
        assert close(t4.cell(label, "judge-b vs mean human: Pearson r").value, pearson(jv[sel], H.mean(1)[sel]))
        assert close(t4.cell(label, "judge-b vs mean human: Spearman ρ").value, spearman(jv[sel], H.mean(1)[sel]))
        assert t4.cell(label, "judge-b vs mean human: Pearson r").n == 30
    assert "its n column" in t4.caption


# ------------------------------------------------------------------------------ 5: degenerate inputs
def long_frame(H: np.ndarray, y: np.ndarray, field: str = "q") -> pd.DataFrame:
    rows = [
        {"item": f"i{i}", "rater": f"h{k}", "rater_kind": "human", "field": field, "value": H[i, k]}
        for i in range(H.shape[0])
        for k in range(H.shape[1])
        if not np.isnan(H[i, k])
    ]
    rows += [
        {"item": f"i{i}", "rater": "judge", "rater_kind": "model", "field": field, "value": y[i]}
        for i in range(len(y))
        if not np.isnan(y[i])
    ]
    return pd.DataFrame(rows)


def verdict_row(frame: pd.DataFrame, level: str = "interval"):
    t = verdicts_table(judge_verdicts(frame, levels={"q": level}), epsilon=0.2)
    return t, dict(zip(t.columns, t.rows[0].cells, strict=True))


def test_no_variation_passes_as_the_reference_says_but_the_cell_says_it_cannot_tell():
    H = np.full((40, 3), 3.0)
    y = np.full(40, 3.0)
    t, row = verdict_row(long_frame(H, y))
    alt = row["Alt-test"]
    assert alt.value == "passes"  # the reference code: p = 0, omega = rho = 1
    assert "no variation: the test cannot tell" in alt.note
    assert any("no variation" in n for n in t.notes)


def test_one_category_only_too_few_humans_and_a_judge_without_overlap_are_said():
    rng = np.random.default_rng(0)
    # the humans all say 1, the judge varies: one category only
    H = np.ones((40, 3))
    y = rng.integers(0, 2, 40).astype(float)
    _, row = verdict_row(long_frame(H, y), "nominal")
    assert "one category only" in row["Alt-test"].note
    # two humans: the alt-test paper asks for at least three
    H2 = rng.integers(1, 6, (40, 2)).astype(float)
    _, row = verdict_row(long_frame(H2, rng.integers(1, 6, 40).astype(float)))
    assert "too few humans" in row["Alt-test"].note
    # a judge that rated only items no human rated
    H3 = np.full((60, 3), np.nan)
    H3[:40] = rng.integers(1, 6, (40, 3))
    y3 = np.full(60, np.nan)
    y3[40:] = 3.0
    _, row = verdict_row(long_frame(H3, y3))
    assert "rated no item a human rated" in row["Alt-test"].note


def test_a_share_with_zero_or_all_events_gets_the_clopper_pearson_interval():
    for k, n in ((0, 25), (25, 25), (0, 7)):
        res = share([1] * k + [0] * (n - k), n_boot=500, seed=1)
        lo, hi = proportion_confint(k, n, alpha=0.05, method="beta")
        assert close(res.ci[0], lo) and close(res.ci[1], hi), (k, n, res.ci, (lo, hi))
        assert res.ci[1] > res.ci[0]
    # between the two ends the percentile bootstrap stays
    mid = share([1] * 5 + [0] * 20, n_boot=500, seed=1)
    assert mid.ci != proportion_confint(5, 25, method="beta")
    cell = Cell.of(share([0] * 25, 500), "%")
    assert cell.ci[0] == 0.0 and cell.ci[1] > 0.1 and format_cell(cell) == "0.0% [0.0%, 13.7%]"


# ------------------------------------------------------------------------------ 6: epsilon and captions
@pytest.mark.parametrize("eps", ["0", "0.5", "0.99"])
def test_epsilon_is_accepted_in_the_same_range_everywhere(eps, tmp_path: Path, valueground, client):
    project = valueground[0]
    ratings = tmp_path / "r.csv"
    ratings.write_text(
        "item,rater,value,rater_kind\n"
        + "".join(f"i{i},h{k},{(i + k) % 3},human\n" for i in range(5) for k in range(2))
    )
    call_command("agreement", str(ratings), "--epsilon", eps, "--bootstrap", "0", stdout=io.StringIO())
    call_command("validation_report", str(project.id), "--epsilon", eps, "--bootstrap", "0", stdout=io.StringIO())
    assert ReportParams.parse(epsilon=eps).epsilon == float(eps)
    client.force_login(project.created_by)
    url = reverse("api_validation_report", args=[project.id])
    assert client.get(url + f"?bootstrap=0&epsilon={eps}").status_code == 200


@pytest.mark.parametrize("eps", ["-0.1", "1", "1.5"])
def test_epsilon_out_of_range_is_refused_everywhere(eps, tmp_path: Path, valueground, client):
    project = valueground[0]
    ratings = tmp_path / "r.csv"
    ratings.write_text("item,rater,value\ni1,h1,1\ni1,h2,1\n")
    with pytest.raises(CommandError):
        call_command("agreement", str(ratings), "--epsilon", eps, stdout=io.StringIO())
    with pytest.raises(CommandError):
        call_command("validation_report", str(project.id), "--epsilon", eps, stdout=io.StringIO())
    with pytest.raises(DomainError):
        ReportParams.parse(epsilon=eps)
    client.force_login(project.created_by)
    assert client.get(reverse("api_validation_report", args=[project.id]) + f"?epsilon={eps}").status_code == 400


def test_the_verdicts_caption_says_which_items_each_figure_uses():
    rng = np.random.default_rng(2)
    H = rng.integers(1, 6, (40, 3)).astype(float)
    y = rng.integers(1, 6, 40).astype(float)
    t, _ = verdict_row(long_frame(H, y))
    assert "only the human-rated items the judge also rated" in t.caption
    assert "at least two human ratings and a judge rating" in t.caption
