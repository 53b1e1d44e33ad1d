"""Applying a policy to a project: item decisions, preview by stratum, manual overrides kept
and audited (who, when, why), history rows."""

from __future__ import annotations

import pytest

from annotation.models import Item
from core.errors import DomainError
from curation import selectors, services
from curation.models import DecisionEvent, ItemDecision

from .helpers import FAIL, PASS, REJECT, judge_rates, submit_all, valueground_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(researcher, annotators, tmp_path):
    project = valueground_project(researcher, annotators[:3], tmp_path / "img", n=4, k=3)
    items = list(Item.objects.filter(project=project).order_by("id"))
    plan = {  # item -> answers of the three annotators (None = not yet answered)
        items[0].id: [PASS, PASS, PASS],  # accepted under all
        items[1].id: [PASS, PASS, FAIL],  # all: needs revision (feedback); majority: accepted
        items[2].id: [PASS, REJECT, REJECT],  # rejected
        items[3].id: [PASS, None, None],  # pending: 1 of 3 ratings
    }
    names = sorted(a.username for a in annotators[:3])
    submit_all(project, lambda item, rater: plan[item.id][names.index(rater.name)])
    project.items_in_order = items
    return project


def test_default_policy_is_the_preset_rule_per_rater_with_k_ratings(project):
    policy = services.current_policy(project)
    assert policy["rule"] == "q1 + q2 >= 3 and q3 == 2 and q4 == 1"
    assert policy["aggregation"] == "all" and policy["min_human_ratings"] == 3 and policy["revise_if"] == "feedback"


def test_apply_decides_every_item_and_records_history(project, researcher):
    report = services.apply_policy(project=project, user=researcher)
    assert report.counts == {"accepted": 1, "rejected": 1, "needs_revision": 1, "pending": 1}
    items = project.items_in_order
    status = {d.item_id: d for d in ItemDecision.objects.filter(project=project)}
    assert [status[i.id].status for i in items] == ["accepted", "needs_revision", "rejected", "pending"]
    assert "2 of 3" in status[items[1].id].reason and "revision requested" in status[items[1].id].reason
    assert status[items[0].id].policy["rule"].startswith("q1 + q2")
    assert DecisionEvent.objects.filter(project=project).count() == 4
    # applying again changes nothing and adds no history
    again = services.apply_policy(project=project, user=researcher)
    assert again.changed == 0 and DecisionEvent.objects.filter(project=project).count() == 4
    assert selectors.decision_counts(project) == {
        "accepted": 1,
        "rejected": 1,
        "needs_revision": 1,
        "pending": 1,
        "total": 4,
    }


def test_a_new_policy_changes_decisions_and_history_keeps_both(project, researcher):
    services.apply_policy(project=project, user=researcher)
    services.set_policy(project=project, raw={"aggregation": "majority", "min_human_ratings": 1}, user=researcher)
    report = services.apply_policy(project=project, user=researcher)
    assert report.counts == {"accepted": 3, "rejected": 1, "needs_revision": 0, "pending": 0}
    item = project.items_in_order[1]
    history = list(DecisionEvent.objects.filter(item=item).values_list("previous_status", "status"))
    assert history == [("", "needs_revision"), ("needs_revision", "accepted")]


def test_preview_counts_by_stratum_without_writing(project):
    preview = services.preview_policy(project=project, raw={"aggregation": "majority"}, by="generator")
    assert preview["total"] == {"accepted": 2, "rejected": 1, "needs_revision": 0, "pending": 1, "total": 4}
    # valueground_records: generator gemini for even items, gpt for odd ones
    assert preview["strata"]["gemini"] == {"accepted": 1, "rejected": 1, "needs_revision": 0, "pending": 0, "total": 2}
    assert preview["strata"]["gpt"]["total"] == 2
    assert not ItemDecision.objects.exists()
    with pytest.raises(DomainError, match="unknown stratum"):
        services.preview_policy(project=project, by="colour")
    with pytest.raises(DomainError, match="unknown field"):
        services.preview_policy(project=project, raw={"rule": "q7 == 1"})


def test_manual_override_is_audited_and_survives_reapplying(project, researcher):
    services.apply_policy(project=project, user=researcher)
    item = project.items_in_order[2]
    with pytest.raises(DomainError, match="note"):
        services.override_decision(item=item, user=researcher, status="accepted", note="  ")
    with pytest.raises(DomainError, match="unknown status"):
        services.override_decision(item=item, user=researcher, status="maybe", note="x")
    d = services.override_decision(item=item, user=researcher, status="accepted", note="second look: fine")
    assert (d.status, d.source, d.decided_by, d.note) == ("accepted", "manual", researcher, "second look: fine")
    report = services.apply_policy(project=project, user=researcher)
    assert report.kept_manual == 1
    assert ItemDecision.objects.get(item=item).status == "accepted"
    last = DecisionEvent.objects.filter(item=item).last()
    assert (last.previous_status, last.status, last.source, last.user, last.note) == (
        "rejected",
        "accepted",
        "manual",
        researcher,
        "second look: fine",
    )
    # asked explicitly, the policy replaces manual decisions (and says so in the history)
    services.apply_policy(project=project, user=researcher, override_manual=True)
    assert ItemDecision.objects.get(item=item).status == "rejected"
    assert DecisionEvent.objects.filter(item=item).count() == 3


def test_judge_screening_on_the_project(project, researcher):
    judge_rates(project, lambda item: PASS if item.id != project.items_in_order[0].id else REJECT)
    services.set_policy(project=project, raw={"judge_screening": True}, user=researcher)
    services.apply_policy(project=project, user=researcher)
    d = ItemDecision.objects.get(item=project.items_in_order[0])
    assert d.status == "rejected" and "judge screening" in d.reason and "gpt-judge" in d.reason


def test_preview_gives_the_acceptance_rate_with_each_judge_by_ppi(project):
    """Issue 11: the acceptance rate over every item with the judge covering the items people
    have not decided (PPI++), equal to ppi-style estimation by hand: the people's decision
    (policy on human ratings only) is the label, the judge's verdict under the rule the
    prediction; overall and per stratum."""
    from hvstats.ppi import ppi_mean

    items = project.items_in_order
    judge_says = {items[0].id: PASS, items[1].id: PASS, items[2].id: REJECT, items[3].id: PASS}
    judge_rates(project, lambda item: judge_says[item.id])
    raw = {"aggregation": "majority", "min_human_ratings": 2}
    preview = services.preview_policy(project=project, raw=raw, by="generator")
    got = preview["acceptance_ppi"]["gpt-judge"]
    # people: items 0, 1 accepted (majority), 2 rejected, 3 pending (1 of 2 ratings): unlabelled
    y, yhat, unlabelled = [1, 1, 0], [1, 1, 0], [1]
    want = ppi_mean(y, yhat, unlabelled)
    assert got["whole"]["n_labeled"] == 3 and got["whole"]["n_unlabeled"] == 1
    for k in ("estimate", "ci", "classical_estimate", "lambda"):
        assert got["whole"][k] == pytest.approx(want[k]), k
    # per stratum (gemini: even items 0 and 2; gpt: odd items 1 and 3)
    gem = ppi_mean([1, 0], [1, 0], [])
    assert got["strata"]["gemini"]["classical_estimate"] == pytest.approx(gem["classical_estimate"])
    assert got["strata"]["gpt"]["n_labeled"] == 1 and got["strata"]["gpt"]["n_unlabeled"] == 1
    assert not ItemDecision.objects.exists()


def test_preview_page_shows_the_acceptance_rate_with_the_judge(client, project, researcher):
    from django.urls import reverse

    items = project.items_in_order
    judge_rates(project, lambda item: PASS if item.id != items[2].id else REJECT)
    client.force_login(researcher)
    r = client.post(
        reverse("curation_preview", args=[project.id]),
        {
            "aggregation": "majority",
            "min_human_ratings": "2",
            "rule": "q1 + q2 >= 3 and q3 == 2 and q4 == 1",
            "by": "generator",
        },
    )
    html = r.content.decode()
    assert r.status_code == 200 and 'data-testid="acceptance-ppi"' in html
    want = services.preview_policy(
        project=project, raw={"aggregation": "majority", "min_human_ratings": 2}, by="generator"
    )
    e = want["acceptance_ppi"]["gpt-judge"]["whole"]
    assert f"{e['estimate']:.3f}" in html and "3 / 1" in html
