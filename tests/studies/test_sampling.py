"""Stratified samples: exact per-stratum counts, seeds, proportional rounding, short strata."""

from __future__ import annotations

from collections import Counter

import pytest

from annotation.models import Item
from core.errors import DomainError
from studies import sampling
from studies.models import Sample, SampleItem
from tests.studies.design_helpers import strata_project

SPEC = {("China", "gpt"): 10, ("China", "gemini"): 7, ("Germany", "gpt"): 5, ("Germany", "gemini"): 2}


@pytest.fixture
def project(researcher):
    return strata_project(researcher, SPEC)


def drawn_per_stratum(sample: Sample) -> Counter:
    return Counter(
        (c, g) for c, g in SampleItem.objects.filter(sample=sample).values_list("item__country", "item__generator")
    )


def test_equal_per_stratum_draws_exact_counts_over_two_keys(project):
    sample = sampling.draw_sample(
        project=project, name="s", strata_keys=["country", "generator"], per_stratum=3, seed=1
    )
    counts = drawn_per_stratum(sample)
    assert counts == {("China", "gpt"): 3, ("China", "gemini"): 3, ("Germany", "gpt"): 3, ("Germany", "gemini"): 2}
    assert sample.report["total_asked"] == 12 and sample.report["total_drawn"] == 11


def test_strata_smaller_than_asked_are_reported_not_silently_short(project):
    plan = sampling.plan_sample(project=project, strata_keys=["country", "generator"], per_stratum=3, seed=1)
    assert [s.label for s in plan.short_strata] == ["Germany / gemini"]
    report = plan.report()
    assert report["short"] == ["stratum Germany / gemini: 2 item(s) available, 3 asked"]
    row = next(r for r in report["strata"] if r["label"] == "Germany / gemini")
    assert row == {
        "values": ["Germany", "gemini"],
        "label": "Germany / gemini",
        "available": 2,
        "asked": 3,
        "drawn": 2,
        "short": 1,
    }


def test_same_seed_same_sample_other_seed_other_sample(project):
    def ids(seed):
        s = sampling.draw_sample(project=project, name=f"s{seed}", strata_keys=["country"], total_size=8, seed=seed)
        return sorted(SampleItem.objects.filter(sample=s).values_list("item_id", flat=True))

    assert ids(7) == ids(7)
    assert ids(7) != ids(8)


def test_proportional_allocation_uses_largest_remainder_and_sums_to_total(project):
    # sizes 10, 7, 5, 2 of 24; total 10 -> exact 4.17, 2.92, 2.08, 0.83 -> 4, 3, 2, 1
    plan = sampling.plan_sample(
        project=project, strata_keys=["country", "generator"], allocation="proportional", total_size=10, seed=3
    )
    asked = {s.values: s.asked for s in plan.strata}
    assert asked == {("China", "gpt"): 4, ("China", "gemini"): 3, ("Germany", "gpt"): 2, ("Germany", "gemini"): 1}
    assert plan.total_drawn == 10
    for total in range(1, 25):
        p = sampling.plan_sample(
            project=project,
            strata_keys=["country", "generator"],
            allocation="proportional",
            total_size=total,
            seed=total,
        )
        assert p.total_asked == total and p.total_drawn == total


def test_largest_remainder_ties_follow_the_seeded_order():
    assert sampling.largest_remainder(10, [1, 1, 1], tie_order=[2, 0, 1]) == [3, 3, 4]
    assert sum(sampling.largest_remainder(7, [3, 3, 3, 1], tie_order=[0, 1, 2, 3])) == 7


def test_equal_total_split_sums_to_total(project):
    plan = sampling.plan_sample(project=project, strata_keys=["country"], total_size=9, seed=0)
    assert sorted(s.asked for s in plan.strata) == [4, 5] and plan.total_drawn == 9


def test_meta_keys_are_strata_too(project):
    plan = sampling.plan_sample(project=project, strata_keys=["meta.topic"], per_stratum=2, seed=0)
    assert sorted(s.label for s in plan.strata) == ["family", "food"]
    assert all(s.drawn == 2 for s in plan.strata)


def test_preview_writes_nothing(project):
    sampling.plan_sample(project=project, strata_keys=["country"], per_stratum=1, seed=0)
    assert not Sample.objects.exists()


def test_quality_control_items_are_never_sampled(researcher):
    extra = [
        {
            "id": "att-1",
            "human_utterance": "a",
            "model_utterance": "b",
            "country": "China",
            "generator": "gpt",
            "meta": {"qc": "attention", "expected.human_written": "left"},
        }
    ]
    project = strata_project(researcher, {("China", "gpt"): 3}, extra=extra)
    plan = sampling.plan_sample(project=project, strata_keys=["country"], per_stratum=10, seed=0)
    assert plan.population == 3
    assert Item.objects.get(external_id="att-1").id not in plan.item_ids[("China",)]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"strata_keys": ["country"]}, "either a total"),
        ({"strata_keys": ["country"], "total_size": 3, "per_stratum": 1}, "either a total"),
        ({"strata_keys": ["country"], "per_stratum": 2, "allocation": "proportional"}, "equal allocation"),
        ({"strata_keys": ["bad key;"], "per_stratum": 2}, "invalid stratum key"),
        ({"strata_keys": ["country"], "per_stratum": 2, "allocation": "weird"}, "unknown allocation"),
    ],
)
def test_bad_parameters_are_refused_with_a_clear_message(project, kwargs, message):
    with pytest.raises(DomainError, match=message):
        sampling.plan_sample(project=project, **kwargs)
