""" "Does the benchmark's conclusion hold?" on the platform (issue 36): the agreement report API, the
validation report API, the page and the printable report carry the per-system scores of the
preset's system stratum (or the one a researcher names) and the findings; the numbers equal a
recomputation from the stored ratings written here with numpy; a bad stratum or finding is
refused with why and stores nothing; only the project's researchers get any of it; the
ValueGround and CULTIVate demo studies show it, with a judge that orders the systems differently
from people somewhere."""

from __future__ import annotations

import html
import io
import json

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse
from django.utils import translation

from agreement import conclusions, table_strings
from agreement.models import AgreementReport
from annotation.models import Project
from demo.studies import PREFIX
from tests.agreement.test_paper_tables import (
    VG_ANNOTATORS,
    VG_FIELDS,
    valueground,  # noqa: F401  (a fixture)
)
from tests.agreement.test_paper_tables import _store_ensemble as store_ensemble
from tests.annotation.factories import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def vg(valueground):  # noqa: F811
    project, ids, humans, judges, pos = valueground
    store_ensemble(project, ids, pos, judges)
    return project, ids, humans


def client_for(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


def _people_mean(humans, ids, field: str, keep) -> float:
    """Each item's mean over the four annotators, then the mean over the kept items (numpy)."""
    per_item = np.mean([humans[name][field] for name, _ in VG_ANNOTATORS], axis=0)
    return float(np.mean([per_item[i] for i, _ in enumerate(ids) if keep(i)]))


def test_the_report_api_scores_each_backbone_as_a_recomputation_says(vg):
    project, ids, humans = vg
    url = reverse("api_agreement_report", args=[project.id])
    body = client_for(project.created_by).get(url, {"bootstrap": 20, "finding": "generator: gpt vs gemini"}).json()
    found = body["result"]["conclusions"]
    assert found["system"] == "generator"  # the preset's system stratum
    backbone = ["gpt", "gemini"]  # the fixture's items alternate
    for f in VG_FIELDS:
        per = found["fields"][f]["ensemble"]
        rows = {r["system"]: r for r in per["systems"]}
        for b in backbone:
            want = _people_mean(humans, ids, f, lambda i, b=b: backbone[i % 2] == b)
            assert rows[b]["human_only"]["estimate"] == pytest.approx(want)
            # every item has people and the judge: PPI++ adds nothing (lambda 0), as ppi_mean says
            assert rows[b]["ppi"]["estimate"] == pytest.approx(want) and rows[b]["n_judge_only"] == 0
        (pair,) = per["pairs"]
        assert pair["sentence"] in (
            "gemini scores higher than gpt",
            "gpt scores higher than gemini",
            "cannot tell gemini from gpt",
        )
        (fd,) = [x for x in found["findings"] if x["field"] == f]
        gpt = _people_mean(humans, ids, f, lambda i: i % 2 == 0)
        gemini = _people_mean(humans, ids, f, lambda i: i % 2 == 1)
        assert fd["human_only"]["estimate"] == pytest.approx(gpt - gemini)
        assert fd["a"] == "gpt" and fd["b"] == "gemini"


def test_the_validation_report_and_the_pages_show_the_section(vg):
    project, _ids, _humans = vg
    owner = client_for(project.created_by)
    body = owner.get(reverse("api_validation_report", args=[project.id]), {"bootstrap": 0}).json()
    keys = [t["key"] for t in body["tables"]]
    assert {"conclusions-systems", "conclusions-pairs", "conclusions-agreement"} <= set(keys)
    assert body["conclusions"]["system"] == "generator"
    latex = owner.get(reverse("api_validation_report", args=[project.id]), {"bootstrap": 0, "format": "latex"})
    assert "Does the benchmark's conclusion hold? Scores per generator" in latex.content.decode()
    for url in (
        reverse("agreement_report", args=[project.id]) + "?bootstrap=0",
        f"/projects/{project.id}/report/?bootstrap=0",
    ):
        page = owner.get(url).content.decode()
        assert 'data-testid="conclusions"' in page and 'data-table="conclusions-pairs"' in page, url
        assert page.count('data-table="conclusions-systems"') == 1  # not again among the protocol's tables


def test_the_validation_report_command_names_a_system_and_a_finding_as_the_api_does(vg):
    project, _ids, _humans = vg
    q = {"bootstrap": 20, "seed": 1, "system": "generator", "finding": "generator: gpt vs gemini"}
    api = client_for(project.created_by).get(reverse("api_validation_report", args=[project.id]), q).json()
    out = io.StringIO()
    call_command("validation_report", project.id, format="json", stdout=out, **q)
    assert json.loads(out.getvalue()) == api["tables"]
    assert "conclusions-findings" in [t["key"] for t in api["tables"]]
    with pytest.raises(CommandError, match="unknown system stratum 'nope'"):
        call_command("validation_report", project.id, system="nope", stdout=io.StringIO())


def test_the_tables_words_are_translated():
    with translation.override("de"):
        assert (
            table_strings.translate("Does the benchmark's conclusion hold? Scores per generator")
            == "Hält die Schlussfolgerung des Benchmarks? Werte pro generator"
        )
        assert table_strings.translate("cannot tell gpt from gemini") == "gpt und gemini nicht unterscheidbar"
        assert (
            table_strings.translate("'region' has no value 'South'; its values: North")
            == "'region' hat keinen Wert 'South'; seine Werte: North"
        )
    with translation.override("zh-hans"):
        assert table_strings.translate("gpt scores higher than gemini") == "gpt 的得分高于 gemini"


@pytest.mark.parametrize(
    "query, message",
    [
        ({"system": "nope"}, "unknown system stratum 'nope'"),
        ({"finding": "generator gpt vs gemini"}, "column: value"),
        ({"finding": "generator: gpt vs llama"}, "no value 'llama'"),
        ({"finding": "nope: a vs b"}, "unknown stratum 'nope'"),
        ({"system": "x" * 501}, "at most 500 characters"),
    ],
)
def test_a_bad_stratum_or_finding_is_refused_with_why_and_stores_nothing(vg, query, message):
    project, _ids, _humans = vg
    owner = client_for(project.created_by)
    before = AgreementReport.objects.count()
    r = owner.get(reverse("api_agreement_report", args=[project.id]), query)
    assert r.status_code == 400 and message in r.content.decode()
    page = owner.get(reverse("agreement_report", args=[project.id]), query)
    assert page.status_code == 400 and message in html.unescape(page.content.decode())
    v = owner.get(reverse("api_validation_report", args=[project.id]), {**query, "bootstrap": 0})
    assert v.status_code == 400 and message in v.content.decode()
    assert AgreementReport.objects.count() == before


def test_only_the_projects_researchers_get_the_conclusions(vg):
    project, _ids, _humans = vg
    q = {"system": "generator", "finding": "generator: gpt vs gemini", "bootstrap": 0}
    urls = [
        reverse("api_agreement_report", args=[project.id]),
        reverse("api_validation_report", args=[project.id]),
        reverse("agreement_report", args=[project.id]),
        f"/projects/{project.id}/report/",
    ]
    annotator = project.memberships.filter(role="annotator").first().user
    outsider = make_user("concl-outsider", researcher=True)
    for url in urls:
        anonymous = Client().get(url, q)
        assert anonymous.status_code in (302, 401, 403), url
        assert "generator" not in anonymous.content.decode() or anonymous.status_code == 302
        for who in (annotator, outsider):
            r = client_for(who).get(url, q)
            assert r.status_code in (403, 404), (url, who)
            assert b"conclusions" not in r.content
        assert client_for(project.created_by).get(url, q).status_code == 200, url


class TestDemo:
    """The ValueGround and CULTIVate demo studies (tests/conftest.py, shared_demo)."""

    @pytest.fixture
    def demo(self, shared_demo, db):
        return {p.preset_key: p for p in Project.objects.filter(name__startswith=PREFIX)}

    def test_the_demo_studies_show_per_system_scores_rank_sets_and_a_finding(self, demo):
        differs = []
        for key in ("valueground.pair_quality", "cultivate.faithfulness"):
            found = conclusions.project_conclusions(demo[key], bootstrap=50)
            assert found is not None and found["system"] == "generator", key
            assert found["fields"], (key, found["skipped"])
            assert found["findings"], key
            for f, per_judge in found["fields"].items():
                for j, r in per_judge.items():
                    assert all(r["rank_sets"]["ppi"][s["system"]] for s in r["systems"])
                    if r["agreement"]["discordant_pairs"] or r["judge_outside_rank_sets"]:
                        differs.append((key, f, j))
        # a judge whose ranking of the systems differs from people's somewhere
        assert differs

    @pytest.mark.slow  # the whole agreement report of the CULTIVate demo study (about 10 s)
    def test_the_demo_page_shows_the_section(self, demo):
        c = Client()
        c.force_login(get_user_model().objects.get(username="researcher"))
        page = c.get(reverse("agreement_report", args=[demo["cultivate.faithfulness"].id]) + "?bootstrap=0").content
        assert b'data-testid="conclusions"' in page and b"Global North" in page
