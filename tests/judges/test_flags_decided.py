"""Every judge declares what it decides; the rest is missing for it, never a "no".

Issue 13: the SSIM counterfactual filter assesses flags 4 and 6 of the Cultural Counterfactuals
audit (by default only 6, see ``judges/backends/image_similarity.py``) but declared nothing, so
flags 1, 2, 3 and 5, which it never assesses, entered the statistics as its "no". Here a real
SSIM judge runs on a counterfactual project next to people, and its undecided flags (and the
derived fields reading them) stay out of the agreement frame, the validation tables, the
acceptance policy and the long export, also for a rater stored before ``decides`` was recorded.
The SSIM proxy's own defaults are rechecked on real photographs."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from PIL import Image, ImageEnhance, ImageFilter

from agreement import validation
from agreement.selectors import ratings_frame
from annotate import annotating
from annotation.expressions import Expression
from annotation.models import Assignment, Rater
from annotation.rubric import Rubric
from benchmarks.counterfactuals import FLAGS
from benchmarks.registry import get_preset
from core.errors import DomainError
from curation import selectors as curation_selectors
from curation.exports import export_root, run_export_job
from curation.models import Export
from curation.policy import PolicySpec, acceptance_labels, compile_policy
from judges import configuration
from judges.backends.image_similarity import FILTER_DEFAULTS, image_ssim
from judges.decides import Decides, rater_decides
from tests.annotation.factories import make_user

from .helpers import project_with_demo
from .test_judge_runs import run_all, start

PRESET = "counterfactuals.audit"
NEVER_ASSESSED = ("context_source", "context_counterfactual", "orientation", "attributes")  # flags 1, 2, 3, 5
NEVER_DERIVED = (
    "flag_context_source",
    "flag_context_counterfactual",
    "flag_orientation",
    "flag_attributes",
    "any_failure",  # reads the whole checklist
    "generation_failure",
)


# --------------------------------------------------------------------------- pure parts
def test_an_expression_tells_which_flags_it_reads():
    assert Expression("count(flags, 'a')").option_reads("flags") == {"a"}
    assert Expression("count(flags, 'a') + count(flags, 'b') > 0").option_reads("flags") == {"a", "b"}
    assert Expression("1 if len(flags) > 0 else 0").option_reads("flags") is None
    assert Expression("len(flags) - count(flags, 'a')").option_reads("flags") is None
    assert Expression("q1 + 1").option_reads("flags") == frozenset()
    decided = {"flags": {"a"}}
    assert not Expression("count(flags, 'a') == 0").reads_undecided(set(), decided)
    assert Expression("count(flags, 'b') == 0").reads_undecided(set(), decided)
    assert Expression("len(flags) == 0").reads_undecided(set(), decided)
    assert Expression("q1 == 0").reads_undecided({"q1"}, {})


def test_undecided_names_of_the_audit_rubric():
    rubric = Rubric.from_schema(get_preset(PRESET).rubric)
    ssim = Decides(frozenset({"flags"}), {"flags": frozenset({"context_missing"})})
    assert ssim.options(rubric.question("flags")) == ["context_missing"]
    assert ssim.partial(rubric) == {"flags"}
    assert ssim.undecided(rubric) == {*NEVER_DERIVED, "flag_person_missing"}
    whole = Decides(frozenset({"flags"}), {})
    assert whole.partial(rubric) == set() and whole.undecided(rubric) == set()
    none = Decides(frozenset(), {})  # a judge answering no question of this rubric
    assert none.options(rubric.question("flags")) == [] and "flags" in none.undecided(rubric)
    assert rater_decides(kind="human", backend="", parameters={"decides": {"flags": []}}, preset=None) is None


# --------------------------------------------------------------------------- the regression
@pytest.fixture
def audit(researcher, tmp_path, django_capture_on_commit_callbacks):
    """A counterfactual project with the people's flags (every flag ticked somewhere) and a real
    SSIM filter judge run over it."""
    people = [make_user("cc-a"), make_user("cc-b")]
    project = project_with_demo(PRESET, researcher, tmp_path, annotators=people)
    rng = np.random.default_rng(7)
    for a in Assignment.objects.filter(project=project, rater__kind="human").order_by("id"):
        ticked = [value for value, _, _ in FLAGS if rng.random() < 0.4]
        annotating.submit_annotation(assignment_id=a.id, rater=a.rater, answers={"flags": ticked})
    config = configuration.create_judge_config(project=project, name="ssim", backend="image_similarity")
    run = run_all(start(config, django_capture_on_commit_callbacks))
    assert run.status == "done", run.message
    return project, config


def judge_fields(project, rater: Rater) -> set[str]:
    frame = ratings_frame(project)
    return set(frame.loc[frame.rater == rater.name, "field"])


@pytest.mark.django_db
def test_an_ssim_filter_judge_never_says_no_to_flags_it_does_not_assess(audit, researcher):
    project, config = audit
    rater = config.rater
    # the SSIM proxy decides flag 6 by default (no person threshold: see its docstring)
    assert rater.parameters["decides"] == {"flags": ["context_missing"]}
    fields = judge_fields(project, rater)
    assert {f for f in fields if f.startswith("flags:")} == {"flags:context_missing"}
    assert not fields & {f"flags:{f}" for f in NEVER_ASSESSED}
    assert not fields & set(NEVER_DERIVED) and "flag_context_missing" in fields
    # the people still rate every flag
    frame = ratings_frame(project)
    human = set(frame.loc[frame.rater_kind == "human", "field"])
    assert {f"flags:{f}" for f in NEVER_ASSESSED} <= human and "any_failure" in human

    # a rater stored before "decides" was recorded reads the same, from its backend and mode
    legacy = {k: v for k, v in rater.parameters.items() if k != "decides"}
    Rater.objects.filter(pk=rater.pk).update(parameters=legacy)
    assert judge_fields(project, rater) == fields

    # validation tables: the judge appears only on the flag it decides
    tables = {t.key: t for t in validation.compute_tables(project, bootstrap=50, seed=0)}
    rows = [r.label for r in tables["counterfactuals-judges"].rows]
    context_missing = next(label for value, label, _ in FLAGS if value == "context_missing")
    assert len(rows) == 1 and rows[0].endswith(f": {context_missing}")

    # acceptance policy: a rule reading undecided flags is incomplete for the judge, not passed
    rubric = project.rubric_version.parsed()
    ratings = curation_selectors.ratings_for(project, list(project.items.values_list("id", flat=True)))
    for rule, judged in (("any_failure == 0", False), ("flag_context_missing == 0", True)):
        policy = compile_policy(PolicySpec(rule=rule, aggregation="majority"), rubric)
        for item_ratings in ratings.values():
            _, judges = acceptance_labels(policy, item_ratings)
            [verdict] = judges.values()
            assert (verdict is not None) == judged, rule

    # long export: no row of the judge for a field it does not decide; its declaration travels
    export = Export.objects.create(
        project=project, created_by=researcher, content="annotations", format="jsonl", scope="all"
    )
    export = run_export_job(export=export)
    assert export.status == "done", export.message
    rows = [json.loads(line) for line in (export_root(export) / "annotations.jsonl").read_text().splitlines()]
    mine = [r for r in rows if r["rater_kind"] == "model"]
    assert {r["field"] for r in mine} == {"flags", "flag_context_missing"}
    assert all(r["judge_parameters"]["decides"] == {"flags": ["context_missing"]} for r in mine)
    assert {"flag_context_source", "any_failure"} <= {r["field"] for r in rows if r["rater_kind"] == "human"}


@pytest.mark.django_db
def test_a_person_threshold_makes_the_ssim_filter_decide_flag_four(audit, django_capture_on_commit_callbacks):
    project, default = audit
    config = configuration.create_judge_config(
        project=project, name="ssim-person", backend="image_similarity", params={"person_min": 0.2}
    )
    assert config.rater.parameters["decides"] == {"flags": ["person_missing", "context_missing"]}
    run = run_all(start(config, django_capture_on_commit_callbacks))
    assert run.status == "done", run.message
    fields = judge_fields(project, config.rater)
    assert {f for f in fields if f.startswith("flags:")} == {"flags:person_missing", "flags:context_missing"}
    assert not fields & set(NEVER_DERIVED)
    # an ensemble of the two decides what both decide: its combined flag 4 would count the
    # default judge's unticked flag 4 as a vote against it
    ensemble = configuration.create_judge_config(
        project=project, name="both", backend="ensemble", members=[default, config], combine="majority"
    )
    assert ensemble.rater.parameters["decides"] == {"flags": ["context_missing"]}


@pytest.mark.django_db
def test_ssim_filter_thresholds_are_checked_when_the_judge_is_created(researcher, tmp_path):
    project = project_with_demo(PRESET, researcher, tmp_path)
    n = Rater.objects.count()
    for params, message in (
        ({"context_min": "low"}, "context_min must be a number"),
        ({"person_min": 2}, "person_min must be a number between -1 and 1"),
        ({"context_min": None}, "would decide no flag"),
    ):
        with pytest.raises(DomainError, match=message):
            configuration.create_judge_config(project=project, name="bad", backend="image_similarity", params=params)
    assert Rater.objects.count() == n


# --------------------------------------------------------------------------- the SSIM proxy's defaults
def _rerendered(im: Image.Image) -> Image.Image:
    """What a generative editor does to a scene it redraws: a 3% rescale, blur, colour shift, JPEG."""
    w, h = im.size
    im = im.resize((int(w * 1.03), int(h * 1.03))).crop((6, 4, 6 + w, 4 + h))
    im = ImageEnhance.Color(im.filter(ImageFilter.GaussianBlur(1.2))).enhance(1.15)
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=40)
    return Image.open(buf).convert("RGB")


def test_ssim_proxy_defaults_on_composites_of_real_photographs(tmp_path):
    """The numbers the SSIM docstring gives for its defaults: context_min = 0.3 separates a
    composite that keeps its scene from the subject alone; SSIM to the person image cannot tell
    whether the person is there, so person_min defaults to null (flag 4 undecided)."""
    from sklearn.datasets import load_sample_images

    china, flower = (Image.fromarray(a) for a in load_sample_images().images)

    def path(im: Image.Image, name: str):
        p = tmp_path / name
        im.save(p)
        return p

    assert FILTER_DEFAULTS == {"context_min": 0.3, "person_min": None}
    for scene, subject in ((china, flower), (flower, china)):
        ctx, person = path(scene, "ctx.png"), path(subject, "person.png")
        w, h = scene.size
        sw, sh = subject.size
        cut = subject.crop((sw // 4, sh // 6, 3 * sw // 4, 5 * sh // 6))
        kept, with_person = [], []
        for scale in (0.3, 0.45, 0.6):
            pasted = cut.resize((int(w * scale), int(w * scale * cut.size[1] / cut.size[0])))
            cf = scene.copy()
            cf.paste(pasted, ((w - pasted.size[0]) // 2, max(h - pasted.size[1], 0)))
            cf_path = path(_rerendered(cf), "cf.png")
            kept.append(image_ssim(cf_path, ctx))
            with_person.append(image_ssim(cf_path, person))
        subject_only = path(_rerendered(subject), "subject.png")
        scene_only = path(_rerendered(scene), "scene.png")
        assert min(kept) > FILTER_DEFAULTS["context_min"] > image_ssim(subject_only, ctx)
        # with the person in the scene or not, SSIM to the person image is as low
        assert max(with_person) < 0.25 and image_ssim(scene_only, person) < 0.25
