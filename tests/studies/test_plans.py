"""Assigning samples: k per item, eligibility, balance, caps, hand (re)assignment, the pool
with leases. The concurrency guarantees are tested against PostgreSQL in test_pool_concurrency."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone

from annotate import annotating
from annotation import projects
from annotation.models import Assignment, Item, Rater
from core.errors import DomainError
from studies import next_item, plans, pool, rules, sampling
from studies.models import PoolSlot
from tests.studies.design_helpers import annotator, strata_project

ANSWER = {"human_written": "left"}


def rater(user) -> Rater:
    return projects.rater_for_user(user)


@pytest.fixture
def team(db):
    return {
        "cn1": annotator("cn1", nationality="China"),
        "cn2": annotator("cn2", nationality="China"),
        "de1": annotator("de1", nationality="Germany"),
        "de2": annotator("de2", nationality="Germany"),
        "fr1": annotator("fr1", nationality="France"),
    }


@pytest.fixture
def project(researcher, team):
    return strata_project(
        researcher, {("China", "gpt"): 6, ("Germany", "gpt"): 6, ("China", "gemini"): 6}, annotators=list(team.values())
    )


def whole_sample(project, **kw):
    return sampling.draw_sample(project=project, name="all", strata_keys=["country"], per_stratum=100, seed=1, **kw)


def test_valueground_design_two_from_each_country_per_item_preassigned(project, team):
    sample = sampling.draw_sample(
        project=project, name="vg", strata_keys=["country", "generator"], per_stratum=3, seed=4
    )
    plan = plans.create_plan(
        sample=sample,
        mode="preassigned",
        k=4,
        balance={"attribute": "nationality", "quota": {"China": 2, "Germany": 2}},
    )
    assert plan.report["unfilled_slots"] == 0 and plan.report["assignments_created"] == 9 * 4
    per_item: dict[int, Counter] = {}
    for item_id, nat in Assignment.objects.filter(plan=plan).values_list("item_id", "rater__attributes__nationality"):
        per_item.setdefault(item_id, Counter())[nat] += 1
    assert len(per_item) == 9
    assert all(c == {"China": 2, "Germany": 2} for c in per_item.values())
    assert not Assignment.objects.filter(plan=plan, rater=rater(team["fr1"])).exists()


def test_cultivate_design_raters_of_the_items_country_preassigned(project, team):
    plan = plans.create_plan(
        sample=whole_sample(project),
        mode="preassigned",
        k=2,
        eligibility=[{"attribute": "nationality", "item_key": "country"}],
    )
    rows = list(Assignment.objects.filter(plan=plan).values_list("item__country", "rater__attributes__nationality"))
    assert len(rows) == 18 * 2 and all(c == n for c, n in rows)
    assert Counter(Assignment.objects.filter(plan=plan).values_list("item_id", flat=True)).most_common(1)[0][1] == 2


def test_preassigned_positions_are_a_random_order_per_annotator(project, team):
    plan = plans.create_plan(
        sample=whole_sample(project),
        mode="preassigned",
        k=2,
        eligibility=[{"attribute": "nationality", "item_key": "country"}],
    )
    cn1 = list(
        Assignment.objects.filter(plan=plan, rater=rater(team["cn1"]))
        .order_by("position")
        .values_list("item_id", flat=True)
    )
    cn2 = list(
        Assignment.objects.filter(plan=plan, rater=rater(team["cn2"]))
        .order_by("position")
        .values_list("item_id", flat=True)
    )
    assert sorted(cn1) == sorted(cn2) and cn1 != cn2


def test_unfillable_places_and_caps_are_reported(project, team):
    plan = plans.create_plan(
        sample=whole_sample(project),
        mode="preassigned",
        k=3,
        cap_per_annotator=4,
        eligibility=[{"attribute": "nationality", "item_key": "country"}],
    )
    # China items need 3 Chinese raters but there are 2; Germany 6 items x 3 places > 2 x cap 4
    assert plan.report["unfilled_slots"] > 0
    per = Counter(Assignment.objects.filter(plan=plan).values_list("rater_id", flat=True))
    assert max(per.values()) <= 4


def test_balance_quota_above_k_is_refused(project):
    with pytest.raises(DomainError, match="more than k"):
        plans.create_plan(
            sample=whole_sample(project), k=2, balance={"attribute": "nationality", "quota": {"China": 2, "Germany": 2}}
        )


def test_pool_serves_only_eligible_annotators_and_never_the_same_item_twice(project, team):
    plan = plans.create_plan(
        sample=whole_sample(project),
        mode="pooled",
        k=2,
        eligibility=[{"attribute": "nationality", "item_key": "country"}],
    )
    assert PoolSlot.objects.filter(plan=plan).count() == 36
    fr = rater(team["fr1"])
    assert next_item.next_assignment(rater=fr, project=project) is None
    de = rater(team["de1"])
    seen = []
    while (a := next_item.next_assignment(rater=de, project=project)) is not None:
        assert a.item.country == "Germany" and a.plan_id == plan.id and a.lease_expires_at is not None
        annotating.submit_annotation(assignment_id=a.id, rater=de, answers=ANSWER)
        seen.append(a.item_id)
    assert len(seen) == len(set(seen)) == 6
    assert PoolSlot.objects.filter(plan=plan, state="submitted").count() == 6


def test_pooled_item_never_gets_more_than_k(project, team):
    plan = plans.create_plan(sample=whole_sample(project), mode="pooled", k=2)
    everyone = [rater(u) for u in team.values()]
    submitted = Counter()
    progress = True
    while progress:
        progress = False
        for r in everyone:
            a = next_item.next_assignment(rater=r, project=project)
            if a is not None:
                annotating.submit_annotation(assignment_id=a.id, rater=r, answers=ANSWER)
                submitted[a.item_id] += 1
                progress = True
    assert len(submitted) == 18 and set(submitted.values()) == {2}
    assert not PoolSlot.objects.filter(plan=plan).exclude(state="submitted").exists()


def test_open_pooled_assignment_is_served_again_until_done(project, team):
    plans.create_plan(sample=whole_sample(project), mode="pooled", k=2)
    r = rater(team["cn1"])
    a = next_item.next_assignment(rater=r, project=project)
    assert next_item.next_assignment(rater=r, project=project).id == a.id


def test_expired_lease_returns_to_the_pool_and_late_submit_is_refused(project, team):
    plan = plans.create_plan(sample=whole_sample(project), mode="pooled", k=1, lease_seconds=60)
    cn1, cn2 = rater(team["cn1"]), rater(team["cn2"])
    a = next_item.next_assignment(rater=cn1, project=project)
    PoolSlot.objects.filter(assignment=a).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    b = next_item.next_assignment(rater=cn2, project=project)
    assert b.item_id == a.item_id  # the expired hold is served first
    a.refresh_from_db()
    assert a.status == "expired"
    with pytest.raises(DomainError, match="expired"):
        annotating.submit_annotation(assignment_id=a.id, rater=cn1, answers=ANSWER)
    annotating.submit_annotation(assignment_id=b.id, rater=cn2, answers=ANSWER)
    assert PoolSlot.objects.get(assignment=b).state == "submitted"
    assert plan.slots.filter(item_id=a.item_id, state="submitted").count() == 1


def test_late_submit_is_accepted_while_nobody_reclaimed_the_slot(project, team):
    plans.create_plan(sample=whole_sample(project), mode="pooled", k=1, lease_seconds=60)
    cn1 = rater(team["cn1"])
    a = next_item.next_assignment(rater=cn1, project=project)
    PoolSlot.objects.filter(assignment=a).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    annotating.submit_annotation(assignment_id=a.id, rater=cn1, answers=ANSWER)
    assert PoolSlot.objects.get(assignment=a).state == "submitted"


def test_expire_leases_sweeps_expired_holds(project, team):
    plans.create_plan(sample=whole_sample(project), mode="pooled", k=1)
    a = next_item.next_assignment(rater=rater(team["cn1"]), project=project)
    assert pool.expire_leases(project=project) == 0
    PoolSlot.objects.filter(assignment=a).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert pool.expire_leases(project=project) == 1
    a.refresh_from_db()
    assert a.status == "expired" and PoolSlot.objects.filter(item=a.item, state="open").count() == 1


def test_skipping_a_pooled_item_gives_it_to_someone_else(project, team):
    plans.create_plan(sample=whole_sample(project), mode="pooled", k=1)
    cn1, cn2 = rater(team["cn1"]), rater(team["cn2"])
    a = next_item.next_assignment(rater=cn1, project=project)
    annotating.skip_assignment(assignment_id=a.id, rater=cn1, reason="cannot judge")
    assert next_item.next_assignment(rater=cn1, project=project).item_id != a.item_id
    seen = set()
    while (b := next_item.next_assignment(rater=cn2, project=project)) is not None:
        seen.add(b.item_id)
        annotating.submit_annotation(assignment_id=b.id, rater=cn2, answers=ANSWER)
    assert a.item_id in seen
    with pytest.raises(DomainError, match="skipped"):
        annotating.submit_annotation(assignment_id=a.id, rater=cn1, answers=ANSWER)


def test_pool_cap_per_annotator(project, team):
    plans.create_plan(sample=whole_sample(project), mode="pooled", k=2, cap_per_annotator=3)
    r = rater(team["de1"])
    for _ in range(3):
        a = next_item.next_assignment(rater=r, project=project)
        annotating.submit_annotation(assignment_id=a.id, rater=r, answers=ANSWER)
    assert next_item.next_assignment(rater=r, project=project) is None


def test_pooled_balance_rule_fills_each_country_quota(project, team):
    plan = plans.create_plan(
        sample=whole_sample(project),
        mode="pooled",
        k=4,
        balance={"attribute": "nationality", "quota": {"China": 2, "Germany": 2}},
    )
    for u in team.values():
        r = rater(u)
        while (a := next_item.next_assignment(rater=r, project=project)) is not None:
            annotating.submit_annotation(assignment_id=a.id, rater=r, answers=ANSWER)
    per_item: dict[int, Counter] = {}
    for item_id, nat in Assignment.objects.filter(plan=plan, status="submitted").values_list(
        "item_id", "rater__attributes__nationality"
    ):
        per_item.setdefault(item_id, Counter())[nat] += 1
    assert len(per_item) == 18 and all(c == {"China": 2, "Germany": 2} for c in per_item.values())


def test_hand_assignment_and_reassignment(project, team):
    plan = plans.create_plan(
        sample=whole_sample(project),
        mode="preassigned",
        k=1,
        eligibility=[{"attribute": "nationality", "item_key": "country"}],
    )
    item = Item.objects.filter(project=project, country="China").first()
    with pytest.raises(DomainError, match="not eligible"):
        plans.hand_assign(project=project, item=item, rater=rater(team["de1"]), plan=plan)
    a = Assignment.objects.get(plan=plan, item=item)
    other = rater(team["cn2"]) if a.rater_id == rater(team["cn1"]).id else rater(team["cn1"])
    new = plans.reassign(assignment=a, to_rater=other)
    a.refresh_from_db()
    assert a.status == "expired" and new.rater_id == other.id and new.status == "assigned"
    # back again: the expired row of the first annotator is revived, not duplicated
    back = plans.reassign(assignment=new, to_rater=a.rater)
    assert back.pk == a.pk and back.status == "assigned"
    annotating.submit_annotation(assignment_id=back.id, rater=back.rater, answers=ANSWER)
    with pytest.raises(DomainError, match="submitted"):
        plans.reassign(assignment=back, to_rater=other)


def test_reassigning_a_pooled_hold_moves_the_slot(project, team):
    plans.create_plan(sample=whole_sample(project), mode="pooled", k=1)
    cn1, cn2 = rater(team["cn1"]), rater(team["cn2"])
    a = next_item.next_assignment(rater=cn1, project=project)
    new = plans.reassign(assignment=a, to_rater=cn2)
    slot = PoolSlot.objects.get(item=a.item)
    assert slot.assignment_id == new.id and slot.rater_id == cn2.id and slot.state == "leased"
    annotating.submit_annotation(assignment_id=new.id, rater=cn2, answers=ANSWER)
    assert PoolSlot.objects.get(item=a.item).state == "submitted"


def test_take_over_removes_unopened_default_rows_and_stops_auto_assignment(researcher, team):
    from tests.studies.design_helpers import strata_project as make

    project = make(researcher, {("China", "gpt"): 3}, annotators=[team["cn1"]], take_over=False)
    assert Assignment.objects.filter(project=project, plan__isnull=True).count() == 3
    plans.create_plan(sample=whole_sample(project), mode="pooled", k=1, take_over=True)
    assert not Assignment.objects.filter(project=project, plan__isnull=True).exists()
    projects.add_member(project=project, user=team["cn2"], role="annotator")
    assert not Assignment.objects.filter(project=project, rater=rater(team["cn2"])).exists()


def test_requirement_keys_cover_subsets_most_specific_first(project, team):
    plan = plans.create_plan(
        sample=whole_sample(project),
        mode="pooled",
        k=2,
        eligibility=[{"attribute": "nationality", "item_key": "country"}],
    )
    assert rules.rater_requirement_keys(rater(team["cn1"]), plan) == ["nationality=china", ""]
