"""Active samples on the platform (issue 27): the judge's uncertainty, the seeded draw with its
stored probabilities, rounds refitted on the labels so far, the usual plans over the drawn items,
and the estimates on the agreement page, the validation report and the API, recomputed here
independently with numpy."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.urls import reverse
from django.utils import translation
from django.utils.html import escape
from scipy.stats import norm

from agreement import active as agreement_active
from agreement import selectors
from annotate import annotating
from annotation import importing, projects
from annotation.answers import METRICS_KEY
from annotation.models import Annotation, Assignment, Item
from hvstats.active import draw_sample, refit_uncertainty, sampling_probabilities
from judges import uncertainty as judge_uncertainty
from studies import active as active_design
from studies import plans
from studies.models import SampleItem
from tests.agreement.test_platform_report import judge_annotates, judge_rater, story_answers, story_records
from tests.annotation.factories import jsonl, make_project, make_user

N_ITEMS = 60


@pytest.fixture(autouse=True)
def fast_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def project(db):
    """60 story items; a judge rates every item's naturalness (its quality, wrong on every
    fourth item) with a confidence metric (low where it is wrong); two humans, no rating yet."""
    owner = make_user("aowner", researcher=True)
    anns = [make_user("aann0"), make_user("aann1")]
    for k, a in enumerate(anns):
        r = projects.rater_for_user(a)
        r.attributes = {"nationality": "Japan" if k == 0 else "Chile"}
        r.save(update_fields=["attributes"])
    p = make_project("cqbench.story", owner=owner, annotators=anns, k=2)
    assert importing.import_items(project=p, data=jsonl(story_records(N_ITEMS)), data_format="jsonl").ok
    items = list(Item.objects.filter(project=p).order_by("id"))
    quality = {it.id: 1 + (k % 5) for k, it in enumerate(items)}
    wrong = {it.id for k, it in enumerate(items) if k % 4 == 0}
    rng = random.Random(3)
    judge = judge_rater("conf-judge")

    def answers(item):
        q = quality[item.id]
        return {**story_answers(rng, q), "naturalness": (6 - q) if item.id in wrong else q}

    judge_annotates(p, judge, answers)
    for a in Annotation.objects.filter(rater=judge):
        a.derived = {**a.derived, METRICS_KEY: {"conf": 0.3 if a.item_id in wrong else 0.9}}
        a.save(update_fields=["derived"])
    p.owner, p.annotators_, p.judge, p.quality = owner, anns, judge, quality
    return p


def uncertainty(project):
    return judge_uncertainty.item_uncertainty(project, project.judge, "confidence:conf")


def draw(project, **kw):
    args = dict(
        project=project,
        uncertainty=uncertainty(project),
        budget=20,
        judge={"rater": project.judge.id, "name": project.judge.name},
        field="naturalness",
        source="1 - confidence",
        seed=11,
    )
    return active_design.draw_active_sample(**{**args, **kw})


def label(project, sample, rng_seed=5):
    """Both humans rate every drawn item of the sample (their rating: the item's quality, noisy)."""
    rng = random.Random(rng_seed)
    drawn = set(SampleItem.objects.filter(sample=sample).values_list("item_id", flat=True))
    for a in Assignment.objects.filter(project=project, rater__kind="human", item_id__in=drawn).select_related(
        "rater", "item"
    ):
        annotating.submit_annotation(
            assignment_id=a.id, rater=a.rater, answers=story_answers(rng, project.quality[a.item_id])
        )


# ------------------------------------------------------------------------------ uncertainty and draw
def test_uncertainty_sources_and_values(project):
    keys = [k for k, _ in judge_uncertainty.sources(project, project.judge)]
    assert "confidence:conf" in keys and "uncertainty:conf" in keys and "uniform" in keys
    u = uncertainty(project)
    assert len(u) == N_ITEMS and set(np.round(list(u.values()), 9)) == {0.1, 0.7}


def test_the_draw_is_seeded_reproducible_and_stores_its_probabilities(project):
    a, b = draw(project), draw(project, name="again")
    drawn_a = sorted(SampleItem.objects.filter(sample=a).values_list("item_id", "pi"))
    drawn_b = sorted(SampleItem.objects.filter(sample=b).values_list("item_id", "pi"))
    assert drawn_a == drawn_b and drawn_a
    assert draw(project, seed=12).report["total_drawn"] >= 0
    # independently: the probabilities and the Bernoulli draws of stats.active
    u = uncertainty(project)
    ids = sorted(u)
    # tau not given: the default 0.5 (issue 34, docs/benchmarks.md "Defaults that keep coverage")
    assert a.design["tau"] == 0.5
    pi = sampling_probabilities(np.array([u[i] for i in ids]), 20, floor=0.05 * 20 / len(ids), tau=0.5)
    xi = draw_sample(pi, np.random.default_rng((11, 0)))
    assert [i for i, x in zip(ids, xi, strict=True) if x] == [i for i, _ in drawn_a]
    assert np.allclose([p for _, p in drawn_a], pi[xi == 1], atol=1e-12)
    pop = a.design["population"]
    assert pop["items"] == ids and np.allclose(pop["pi"], pi, atol=1e-12) and abs(sum(pop["pi"]) - 20) < 1e-9
    assert a.design["kind"] == "active" and a.design["judge"]["name"] == "conf-judge"
    # the uncertain items (the judge is wrong there) are drawn far more often (with half the
    # weight on the uniform rule: 7 / 3 times as often for an uncertainty 7 times larger)
    assert max(pi) > 2.5 * min(pi)


def test_a_plan_over_an_active_sample_respects_k_and_eligibility(project):
    sample = draw(project)
    plan = plans.create_plan(
        sample=sample,
        mode="preassigned",
        k=1,
        eligibility=[{"attribute": "nationality", "item_key": "country"}],
        take_over=True,
    )
    rows = Assignment.objects.filter(plan=plan).select_related("rater", "item")
    drawn = set(SampleItem.objects.filter(sample=sample).values_list("item_id", flat=True))
    per_item: dict[int, int] = {}
    for a in rows:
        per_item[a.item_id] = per_item.get(a.item_id, 0) + 1
        assert a.rater.attributes["nationality"] == a.item.country
    assert set(per_item) <= drawn and all(n == 1 for n in per_item.values())
    # Kenya items have no eligible annotator: left unstaffed, not given to someone else
    kenya = {i for i in drawn if Item.objects.get(pk=i).country == "Kenya"}
    assert not kenya & set(per_item)


def test_budget_for_a_half_width_follows_the_variance_formula():
    u = np.array([0.1] * 30 + [0.7] * 10)
    n = active_design.budget_for_half_width(u, residual_variance=1.0, half_width=0.3)
    s = u * math.sqrt(1.0 / np.mean(u**2))
    z = norm.ppf(0.975)
    var = ((s.sum()) ** 2 / n - (s**2).sum()) / len(u) ** 2
    assert abs(z * math.sqrt(var) - 0.3) < 1e-9


# ------------------------------------------------------------------------------ estimates
def _numpy_active(y, f, pi, xi, alpha=0.05):
    """The active estimate recomputed from its definition: A = Y xi / pi, B = f (xi / pi - 1),
    lambda = 1 with fewer than 200 labels (issue 34), else cov(A, B) / var(B) unclipped,
    Z = A - lambda B, mean and sd / sqrt(N)."""
    A = np.where(xi == 1, y, 0.0) * xi / pi
    B = f * (xi / pi - 1)
    lam = 1.0 if xi.sum() < 200 else float(np.cov(A, B, bias=True)[0, 1] / np.var(B))
    Z = A - lam * B
    se = Z.std() / math.sqrt(len(Z))
    z = norm.ppf(1 - alpha / 2)
    return Z.mean(), (Z.mean() - z * se, Z.mean() + z * se)


def _field_data(project, sample_list, field="naturalness"):
    frame = selectors.ratings_frame(project)
    sub = frame[frame["field"] == field]
    human = sub[sub["rater_kind"] == "human"].assign(v=lambda d: d["value"].astype(float))
    ymean = human.groupby("item_pk")["v"].mean().to_dict()
    fj = sub[sub["rater"] == "conf-judge"].set_index("item_pk")["value"].astype(float).to_dict()
    ids, pis, xis = [], [], []
    for s in sample_list:
        drawn = set(SampleItem.objects.filter(sample=s).values_list("item_id", flat=True))
        for i, p in zip(s.design["population"]["items"], s.design["population"]["pi"], strict=True):
            ids.append(i)
            pis.append(p)
            xis.append(1 if i in drawn else 0)
    y = np.array([ymean.get(i, np.nan) for i in ids])
    return y, np.array([fj[i] for i in ids]), np.array(pis), np.array(xis)


def test_estimates_equal_an_independent_numpy_recomputation(project):
    sample = draw(project)
    assert agreement_active.estimates(project)["series"][0]["reason"].startswith("round 1 is still")
    label(project, sample)
    est = agreement_active.estimates(project)["series"][0]
    nat = est["fields"]["naturalness"]["overall"]
    y, f, pi, xi = _field_data(project, [sample])
    mean, ci = _numpy_active(y, f, pi, xi)
    assert abs(nat["estimate"] - mean) < 1e-9
    assert abs(nat["ci"][0] - ci[0]) < 1e-9 and abs(nat["ci"][1] - ci[1]) < 1e-9
    assert nat["n_labeled"] == int(xi.sum()) and nat["n_items"] == N_ITEMS
    assert "uniform" in nat and nat["uniform"]["human_only_half_width"] > 0
    assert "country" in est["fields"]["naturalness"]["strata"]
    assert est["guarantee"] == agreement_active.FIXED_GUARANTEE


def test_rounds_refit_on_the_labels_so_far_and_the_estimate_stays_sequential(project):
    first = draw(project, rounds=2, target_half_width=0.05)
    assert first.design["rounds"] == 2 and len(first.design["population"]["items"]) == N_ITEMS // 2
    with pytest.raises(Exception, match="still being labelled"):
        agreement_active.refitted_uncertainty(first)
    label(project, first)
    u, source = agreement_active.refitted_uncertainty(first)
    assert source.startswith("refitted on")
    # the refit, recomputed: the prior of the done and next items, the done items' labels
    y, f, pi, xi = _field_data(project, [first])
    prior = dict(zip(first.design["prior"]["items"], first.design["prior"]["u"], strict=True))
    done = first.design["population"]["items"]
    _, nxt = active_design.next_round_items(first)
    expect = refit_uncertainty(np.array([prior[i] for i in done]), f, y, xi, pi, np.array([prior[i] for i in nxt]))
    assert np.allclose([u[i] for i in nxt], expect)
    second = active_design.draw_next_round(first=first, uncertainty=u, source=source)
    assert second.design["round"] == 1 and second.design["series"] == first.id
    assert set(second.design["population"]["items"]).isdisjoint(done)
    assert set(SampleItem.objects.filter(sample=second).values_list("round", flat=True)) <= {1}
    with pytest.raises(Exception, match="every round"):
        active_design.next_round_items(first)
    label(project, second, rng_seed=6)
    est = agreement_active.estimates(project)["series"][0]
    assert est["rounds_used"] == 2
    nat = est["fields"]["naturalness"]["overall"]
    y2, f2, pi2, xi2 = _field_data(project, [first, second])
    mean, _ = _numpy_active(y2, f2, pi2, xi2)
    assert abs(nat["estimate"] - mean) < 1e-9 and nat["n_items"] == N_ITEMS
    assert [r["round"] for r in nat["rounds_summary"]] == [0, 1]
    assert nat["cs_half_width"] > nat["half_width"] and "stop" in nat
    assert "confidence sequence" in est["guarantee"]


# ------------------------------------------------------------------------------ pages and API
def test_pages_and_api_for_the_researcher(client, project):
    client.force_login(project.owner)
    url = reverse("active_sample", args=[project.id])
    r = client.get(url, {"judge": project.judge.id, "source": "confidence:conf", "field": "naturalness"})
    assert r.status_code == 200
    body = r.content.decode()
    assert "Uncertainty used" in body and "1 - confidence" in body and "<svg" in body
    r = client.post(
        reverse("active_draw", args=[project.id]),
        {
            "judge": project.judge.id,
            "source": "confidence:conf",
            "field": "naturalness",
            "budget": 20,
            "tau": 0,
            "floor": 0.05,
            "seed": 11,
            "rounds": 1,
        },
    )
    assert r.status_code == 302
    sample = active_design.project_series(project)[0]
    assert r["Location"] == reverse("sample_detail", args=[project.id, sample.id])
    label(project, sample)
    est = agreement_active.estimates(project)["series"][0]["fields"]["naturalness"]["overall"]
    page = client.get(reverse("agreement_report", args=[project.id]), {"bootstrap": 0}).content.decode()
    assert "active-estimates" in page and f"{est['estimate']:.3f}" in page
    assert escape(agreement_active.FIXED_GUARANTEE) in page
    api = client.get(reverse("api_validation_report", args=[project.id]), {"bootstrap": 0}).json()
    got = api["active"]["series"][0]["fields"]["naturalness"]["overall"]
    assert abs(got["estimate"] - est["estimate"]) < 1e-12
    assert any(t["key"] == f"active-{sample.id}" for t in api["tables"])
    md = client.get(reverse("api_validation_report", args=[project.id]), {"bootstrap": 0, "format": "markdown"})
    assert "Active estimates" in md.content.decode()


def test_pages_and_api_refuse_annotators_and_outsiders(client, project):
    draw(project)
    outsider = make_user("outsider", researcher=True)
    for user in (project.annotators_[0], outsider):
        client.force_login(user)
        assert client.get(reverse("active_sample", args=[project.id])).status_code in (403, 404)
        assert client.post(reverse("active_draw", args=[project.id]), {}).status_code in (403, 404)
        first = active_design.project_series(project)[0]
        assert client.post(reverse("active_next_round", args=[project.id, first.id])).status_code in (403, 404)
        assert client.get(reverse("api_validation_report", args=[project.id])).status_code in (403, 404)
    client.force_login(project.owner)
    assert client.get(reverse("active_sample", args=[987654])).status_code == 404


def test_projects_without_an_active_sample_have_no_active_key(client, project):
    client.force_login(project.owner)
    api = client.get(reverse("api_validation_report", args=[project.id]), {"bootstrap": 0}).json()
    assert "active" not in api


# ------------------------------------------------------------------------------ migration
@pytest.mark.django_db(transaction=True)
def test_the_migration_adds_the_design_and_probabilities_to_existing_samples():
    executor = MigrationExecutor(connection)
    executor.migrate([("studies", "0001_initial")])
    old = executor.loader.project_state([("studies", "0001_initial")]).apps
    Sample = old.get_model("studies", "Sample")
    assert "design" not in {f.name for f in Sample._meta.get_fields()}
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    new = executor.loader.project_state(executor.loader.graph.leaf_nodes()).apps
    fields = {f.name for f in new.get_model("studies", "SampleItem")._meta.get_fields()}
    assert {"pi", "round"} <= fields
    assert "design" in {f.name for f in new.get_model("studies", "Sample")._meta.get_fields()}


# ------------------------------------------------------------------------------ results that read right
def _cs_half_width_by_hand(sd, t, alpha, t_opt):
    """Theorem 2.2 of Waudby-Smith, Arbour, Sinha, Kennedy and Ramdas (arXiv:2103.06476), as the
    docstring of hvstats.active writes it, recomputed here."""
    rho2 = (-2 * math.log(alpha) + math.log(-2 * math.log(alpha) + 1)) / t_opt
    return sd * math.sqrt(2 * (t * rho2 + 1) / (t**2 * rho2) * math.log(math.sqrt(t * rho2 + 1) / alpha))


def test_intervals_are_cut_to_the_field_scale_and_say_so(project):
    assert agreement_active.field_scale(project, "naturalness", "mean") == (1.0, 5.0)
    assert agreement_active.field_scale(project, "anything", "rate") == (0.0, 1.0)
    assert agreement_active.field_scale(project, "no-such-field", "mean") is None
    res = agreement_active.clip_to_scale({"ci": [-0.1, 0.6], "cs": [0.2, 1.3], "half_width": 0.35}, (0.0, 1.0))
    assert res["ci"] == [0.0, 0.6] and res["cs"] == [0.2, 1.0] and res["clipped"] and res["half_width"] == 0.35
    inside = agreement_active.clip_to_scale({"ci": [1.5, 4.5]}, (1.0, 5.0))
    assert inside["ci"] == [1.5, 4.5] and "clipped" not in inside
    assert agreement_active.clip_to_scale({"ci": [-3.0, 9.0]}, None) == {"ci": [-3.0, 9.0]}


def test_target_status_says_reached_or_whether_the_remaining_rounds_can_reach_it():
    design = {"target_half_width": 0.05, "rounds": 3, "population_size": 400}
    reached = agreement_active.target_status({"cs_half_width": 0.04, "stop": True}, design, 2)
    assert reached["reached"]
    # 100 items of 400 used, se 0.03: increments' sd 0.3, projected to all 400 items
    res = {"cs_half_width": 0.137, "stop": False, "n_items": 100, "se": 0.03}
    t = agreement_active.target_status(res, design, 1)
    expected = _cs_half_width_by_hand(0.3, 400, 0.05, 400)
    assert not t["reached"] and t["rounds_left"] == 2 and abs(t["projected"] - expected) < 1e-12
    assert t["reachable"] == (expected <= 0.05)
    assert agreement_active.target_status(res, {**design, "target_half_width": 1.0}, 1)["reachable"]
    done = agreement_active.target_status(res, design, 3)
    assert done["rounds_left"] == 0 and done["projected"] is None and not done["reachable"]
    assert agreement_active.target_status(res, {**design, "target_half_width": None}, 1) is None


def test_the_estimates_table_says_when_it_cut_an_interval_and_why_savings_are_negative(project):
    from django.template.loader import render_to_string

    from agreement.presentation import active_context

    overall = {
        "estimate": 0.875,
        "ci": [0.622, 1.0],
        "clipped": True,
        "scale": [0.0, 1.0],
        "half_width": 0.253,
        "n_labeled": 8,
        "n_items": 40,
        "uniform": {"ppi_labels_saved": -6, "human_only_labels_saved": -3.9},
    }
    series = {
        "sample": 1,
        "name": "s (round 2 of 2)",
        "round_status": [],
        "target_half_width": None,
        "fields": {"q4": {"kind": "rate", "overall": overall}},
    }
    html = render_to_string(
        "agreement/_active.html", {"active": active_context({"series": [series]}), "project": project}
    )
    assert "cut to the scale 0–1" in html
    assert "uniform sampling would have reached this precision with fewer labels" in html
    assert "s (round 2 of 2)" in html


def test_refusals_are_shown_on_the_page_with_a_4xx_never_a_5xx(client, project):
    """A judge run once has no passes: not offered, and asked for anyway (a stale form, a typed
    address) it is refused on the page; so are inputs the form or the statistics refuse."""
    client.force_login(project.owner)
    page = reverse("active_sample", args=[project.id])
    draw_url = reverse("active_draw", args=[project.id])
    offered = [k for k, _ in judge_uncertainty.sources(project, project.judge)]
    assert "passes" not in offered and offered[0] == "confidence:conf"
    assert [label for label, _ in judge_uncertainty.missing_sources(project, project.judge)] == [
        "disagreement across the judge's passes / members"
    ]
    r = client.get(page, {"judge": project.judge.id, "source": "passes", "field": "naturalness"})
    assert r.status_code == 400 and 'class="error" role="alert"' in r.content.decode()
    assert "several passes or as an ensemble" in r.content.decode()
    base = {"judge": project.judge.id, "source": "confidence:conf", "field": "naturalness", "tau": 0, "floor": 0.05}
    shown = client.post(draw_url, {**base, "action": "show"})
    assert shown.status_code == 200 and "uncertainty-distribution" in shown.content.decode()
    for bad in (
        {"source": "passes", "budget": 10, "seed": 0, "rounds": 1},
        {"judge": "not a number", "budget": 10, "seed": 0, "rounds": 1},
        {"budget": 10, "seed": 0, "rounds": 1, "field": "no such field"},
        {"seed": 0, "rounds": 1},  # neither a budget nor a target
        {"budget": 10_000, "seed": 0, "rounds": 1},  # more than the pool
        {"budget": 10, "seed": 0, "rounds": 20},  # more rounds than the budget can fill
    ):
        r = client.post(draw_url, {**base, **bad, "action": "draw"})
        assert r.status_code < 500, (bad, r.status_code)
        if r.status_code != 302:
            assert r.status_code in (400, 409) and 'class="error" role="alert"' in r.content.decode(), bad
    assert client.post(draw_url, {**base, "source": "passes", "budget": 10, "seed": 0, "rounds": 1}).status_code == 400


# ------------------------------------------------------------------------------ exact interval (issue 34)
def test_a_0_1_field_at_0_percent_gets_the_exact_interval_and_its_note_on_the_pages(client, project):
    """Every human says 0 on ``consistency``: the human-only (Horvitz-Thompson) mean is 0 with a
    zero-width CLT interval; the platform's active estimates give the Clopper-Pearson interval over
    the human labels instead (scipy's exact binomial interval), as the command's --active does,
    and the page, the API and the validation table say so."""
    from scipy.stats import binomtest

    sample = draw(project)
    rng = random.Random(5)
    drawn = set(SampleItem.objects.filter(sample=sample).values_list("item_id", flat=True))
    for a in Assignment.objects.filter(project=project, rater__kind="human", item_id__in=drawn).select_related(
        "rater", "item"
    ):
        answers = {**story_answers(rng, project.quality[a.item_id]), "consistency": [0, 0]}
        annotating.submit_annotation(assignment_id=a.id, rater=a.rater, answers=answers)
    series = agreement_active.estimates(project)["series"][0]
    zero_one = ["consistency[1]", "consistency[2]"]
    assert all(series["fields"][f]["kind"] == "rate" for f in zero_one)
    for f in zero_one:
        r = series["fields"][f]["overall"]
        h = r["human_only"]
        n = r["n_labeled"]
        assert h["estimate"] == 0.0 and h.get("ci_method") == "clopper_pearson"
        ref = binomtest(0, n).proportion_ci(confidence_level=0.95, method="exact")
        assert h["ci"] == pytest.approx([ref.low, ref.high], abs=1e-12) and h["ci"][1] > 0
        if r["ci"][0] == r["ci"][1] == 0.0 or r.get("ci_method") == "clopper_pearson":  # the judge agrees too
            assert r["ci"] == pytest.approx([ref.low, ref.high], abs=1e-12)
        noted = [x for x in series["notes"] if x["field"] == f and x["stratum"] is None]
        assert any(x["statistic"] == "active human-only mean" and x["n_items"] == n for x in noted)
    # a field whose humans vary, and a mean of 0/1 answers that is no share, keep the CLT interval
    for f in ("naturalness", "consistency_rate"):
        assert "ci_method" not in series["fields"][f]["overall"]["human_only"]
        assert not [x for x in series["notes"] if x["field"] == f]
    client.force_login(project.owner)
    page = client.get(reverse("agreement_report", args=[project.id]), {"bootstrap": 0}).content.decode()
    assert 'class="active-notes"' in page and "Clopper-Pearson" in page
    api = client.get(reverse("api_validation_report", args=[project.id]), {"bootstrap": 0}).json()
    assert api["active"]["series"][0]["notes"] == series["notes"]
    client.cookies["django_language"] = "de"
    with translation.override("de"):
        de = client.get(reverse("agreement_report", args=[project.id]), {"bootstrap": 0})
    assert "aktiver Mittelwert nur aus Menschen" in de.content.decode()
