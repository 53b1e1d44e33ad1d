"""Issue 35: "the same Spearman rho with two different intervals on one page (0.617 [0.302,
0.809] in Table 4, [0.303, 0.815] in 'Judges vs humans') with no word of why". The page now
says why under "Judges vs humans"; this checks that what it says is so on a ValueGround study
with two generation backbones: one estimate (scipy's Spearman of the judge vs the mean human),
Table 4's interval resampled within backbone (its caption says so), the summary's not."""

from __future__ import annotations

import numpy as np
import pytest
from django.urls import reverse
from scipy import stats as ss

from agreement import services
from agreement.services import ReportParams
from tests.agreement.test_paper_tables import VG_ANNOTATORS, VG_FIELDS, submit_judge, valueground  # noqa: F401

pytestmark = pytest.mark.django_db


def test_the_page_says_why_one_coefficient_has_two_intervals(valueground, client):  # noqa: F811
    project, _ids, humans, judges, pos = valueground
    jraw = judges["judge-a"]
    submit_judge(project, "judge-a", lambda e: {f: int(jraw[f][pos[e]]) for f in VG_FIELDS})
    rep = services.compute_report(project=project, params=ReportParams(bootstrap=200, seed=0))
    table4 = next(t for t in rep["validation"] if t["key"] == "valueground-table4")
    assert table4["caption"].endswith("Resampled within generation backbone.")
    column = table4["columns"].index("judge-a vs mean human: Spearman ρ")
    in_table = next(r for r in table4["rows"] if r["label"] == "Q1")["cells"][column]
    in_summary = rep["fields"]["q1"]["judges_vs_humans"]["judge-a"]["vs_human_mean"]["spearman"]
    # the estimate, recomputed: Spearman of the judge vs the per-item mean of the four humans
    mean_human = np.column_stack([humans[u]["q1"] for u, _ in VG_ANNOTATORS]).astype(float).mean(1)
    rho = ss.spearmanr(np.asarray(jraw["q1"], float), mean_human).statistic
    assert in_table["value"] == pytest.approx(rho, abs=1e-12) and in_summary["value"] == pytest.approx(rho, abs=1e-12)
    # two resampling schemes: two intervals around the one estimate
    assert in_table["ci"] != in_summary["ci"]
    client.force_login(project.created_by)
    html = client.get(reverse("agreement_report", args=[project.id])).content.decode()
    summary = html.split('data-testid="judge-summary"', 1)[1]
    assert 'data-testid="interval-note"' in summary and "resample all of a field" in summary
