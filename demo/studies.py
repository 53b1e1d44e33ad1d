"""The simulated study of each preset (docs/demo.md): a project "Demo study: <preset>" whose
items, study design, annotators' answers and judges' runs are made from the preset's
``demo_study`` (``benchmarks/<paper>/demo/<name>.study.json``) by :mod:`demo.simulation`.

Everything goes through the services a researcher's browser would use (project, import,
sample, plan, hand assignment, QC settings, judge configuration); the many answers are written
in bulk with the invariants of a submission kept: each answer is checked by the rubric's
validator and its derived fields computed by the rubric (as ``annotate.annotating.store_locked``
does), its rows are the one writer's (``annotation.writing``), the assignment marked submitted
with the annotation in one transaction, and the attention checks go through
``submit_annotation`` itself (their QC outcome is recorded there). The judges' runs are stored
as a finished run would leave them: one output per item and order (raw reply, parsed answer,
tokens), one item result, and the judge rater's annotation with ``judges.ratings.judge_derived``."""

from __future__ import annotations

import dataclasses
import json
import random
import zlib
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from annotate import annotating
from annotation import importing, projects, writing
from annotation.assigning import draw_presentation
from annotation.bulk import insert_rows, reserve_ids
from annotation.models import Annotation, Assignment, Item, Project, Rater
from annotation.presentation import item_render_context
from benchmarks.base import Preset
from core.errors import DomainError
from judges.configuration import create_judge_config
from judges.models import JudgeItemResult, JudgeOutput, JudgeRun
from judges.ratings import judge_derived, judged_rubric
from studies import plans, quality, sampling
from studies.models import AssignmentPlan

from . import simulation as sim

PREFIX = "Demo study: "
KEEP_OPEN = 4  # items annotator1 and annotator2 get in every simulated study, left to them


def project_name(preset: Preset) -> str:
    return f"{PREFIX}{preset.name}"


def sim_users(specs: list[dict[str, Any]]) -> dict[str, Rater]:
    """The pseudonymous simulated annotators (no password: nobody logs in as them), with their
    profile attributes (nationality) on their rater."""
    User = get_user_model()
    out = {}
    for s in specs:
        user = User.objects.filter(username=s["name"]).first()
        if user is None:
            user = User(username=s["name"])
            user.set_unusable_password()
            user.save()
        rater = projects.rater_for_user(user)
        attributes = {"simulated": True, **({"nationality": s["group"]} if s.get("group") else {})}
        if rater.attributes != attributes:
            rater.attributes = attributes
            rater.save(update_fields=["attributes"])
        out[s["name"]] = rater
    return out


def key(item: Item) -> int:
    """An item's draws are keyed by its external id, not its primary key: the same answers
    whatever ids a database hands out."""
    return zlib.crc32(item.external_id.encode())


class DemoFiles:
    """Each preset's demo items, their images drawn once per command into one folder that the
    demo project's import and the simulated study's import both read."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.made: dict[str, list[dict[str, Any]]] = {}

    def folder(self, preset: Preset) -> Path:
        return self.root / preset.key

    def records(self, preset: Preset) -> list[dict[str, Any]]:
        if preset.key not in self.made:
            self.folder(preset).mkdir(parents=True, exist_ok=True)
            self.made[preset.key] = preset.demo_items(self.folder(preset))
        return [dict(r) for r in self.made[preset.key]]


def item_records(
    preset: Preset, study: dict[str, Any], templates: list[dict[str, Any]], *, pool: bool = False
) -> list[dict[str, Any]]:
    """The study's items: the preset's demo items as templates, ``items.count`` of them in turn,
    each with the strata of ``items.strata`` (cycled; a template's own country named in its text
    is replaced by the new one), plus the attention check(s) of ``qc.attention``. ``pool``: the
    rest of the pool instead, ``items.judge_only`` more items made the same way (numbered on
    from ``count``), which only the judges rate."""
    spec = study["items"]
    strata = spec.get("strata") or [{}]
    out = []
    first = int(spec["count"]) if pool else 0
    last = first + int(spec.get("judge_only", 0)) if pool else int(spec["count"])
    for n in range(first, last):
        t = dict(templates[n % len(templates)])
        s = (
            strata[n % len(strata)]
            if spec.get("cycle", "strata") == "strata"
            else strata[(n // len(templates)) % len(strata)]
        )
        old = t.get("country")
        for key, value in s.items():
            t[key] = value
        if old and s.get("country") and s["country"] != old:
            for key, value in list(t.items()):
                if isinstance(value, str) and key not in ("id", "country") and old in value:
                    t[key] = value.replace(old, s["country"])
        t["id"] = f"{spec.get('prefix', 'sim')}-{n + 1:03d}"
        meta = dict(t.get("meta") or {})
        meta["simulated"] = True
        t["meta"] = meta
        out.append(t)
    if pool:
        return out
    for k, check in enumerate((study.get("qc") or {}).get("attention", [])):
        t = dict(templates[k % len(templates)])
        t["id"] = f"{spec.get('prefix', 'sim')}-attention-{k + 1}"
        t["meta"] = {"qc": "attention", **{f"expected.{q}": v for q, v in check["expected"].items()}}
        out.append(t)
    return out


class Seeder:
    def __init__(self, preset: Preset, study: dict[str, Any], users: dict[str, Any], files: DemoFiles, write) -> None:
        self.preset, self.study, self.users, self.files, self.write = preset, study, users, files, write
        self.seed = int(study["seed"])
        self.models = sim.question_models(preset.rubric["questions"], study.get("questions", {}))
        groups = study.get("group_bias", {})
        self.humans = sim.rater_models(study["annotators"], groups)
        self.now = timezone.now().replace(microsecond=0)

    # ---------------------------------------------------------------- the study design
    def run(self) -> Project:
        preset, study = self.preset, self.study
        design = preset.study_design
        with transaction.atomic():
            project = projects.create_project(
                name=project_name(preset),
                preset_key=preset.key,
                created_by=self.users["researcher"],
                k_per_item=int(study.get("k") or (design.k if design and design.k else preset.defaults.get("k", 2))),
                assignment="plans",
            )
            options = {**project.options, "demo": True, "simulated": True}
            Project.objects.filter(pk=project.pk).update(options=options)
            project.options = options
            raters = sim_users(study["annotators"])
            for name in raters:
                projects.add_member(project=project, user=raters[name].user, role="annotator")
            records = item_records(preset, study, self.files.records(preset))
            data = "\n".join(json.dumps(r, ensure_ascii=False) for r in records)
            report = importing.import_items(
                project=project,
                data=data,
                data_format="jsonl",
                images=self.files.folder(preset) if preset.image_fields() else None,
            )
            if not report.ok:
                raise DomainError(f"the simulated items of {preset.name} do not import: {report.errors[:3]}")
            sample = sampling.draw_sample(
                project=project,
                name=study.get("sample_name", "Simulated study sample"),
                strata_keys=list(study.get("strata", design.sample_strata if design else ())),
                allocation=study.get("allocation") or (design.sample_allocation if design else None) or "equal",
                total_size=int(study["sample_size"]),
                seed=self.seed,
                created_by=self.users["researcher"],
            )
            qc = {**(dict(design.qc) if design else {}), **(study.get("qc") or {}).get("settings", {})}
            if qc:
                quality.set_qc_settings(project=project, values=qc)
            plan = plans.create_plan(
                sample=sample,
                name=study.get("plan_name", f"Simulated study: k={project.k_per_item}"),
                mode=AssignmentPlan.Mode.PREASSIGNED,
                k=project.k_per_item,
                eligibility=[dict(r) for r in (design.eligibility if design else ())],
                balance=dict(design.balance) if design and design.balance else None,
                cap_per_annotator=design.cap_per_annotator if design else None,
                seed=self.seed,
                created_by=self.users["researcher"],
            )
            self.answer_plan(project, plan, raters)
            self.attention_checks(project, raters)
            for demo_user in ("annotator1", "annotator2"):
                self.keep_open(project, plan, self.users[demo_user])
            self.import_pool(project)
            for k, judge in enumerate(study.get("judges", [])):
                self.judge(project, judge, k)
        return project

    # ---------------------------------------------------------------- human answers
    def answer_plan(self, project: Project, plan: AssignmentPlan, raters: dict[str, Rater]) -> None:
        by_id = {r.id: r for r in raters.values()}
        model_of = {m.name: m for m in self.humans}
        rubric = project.rubric_version.parsed()
        rows = list(
            Assignment.objects.filter(plan=plan, rater_id__in=list(by_id))
            .select_related("item")
            .order_by("rater_id", "position", "id")
        )
        items = sorted({a.item for a in rows}, key=lambda it: it.id)
        self.truths = {it.id: self.truth(it) for it in items}
        behaviour = {s["name"]: s for s in self.study["annotators"]}
        order = {s["name"]: n for n, s in enumerate(self.study["annotators"])}
        annotations, submitted, skipped = [], [], []
        for a in rows:
            name = by_id[a.rater_id].name
            b = behaviour[name]
            rng = sim.rng_for(self.seed, 1, order[name], key(a.item))
            left = {qid: order[0] for qid, order in (a.presentation or {}).get("pair_order", {}).items()}
            u = rng.random()
            if u < float(b.get("skip_rate", 0.0)):
                reasons = self.study.get("skip_reasons") or ["I cannot judge this item."]
                skipped.append((a.id, reasons[int(rng.integers(len(reasons)))]))
                continue
            if u > 1 - float(b.get("unfinished_rate", 0.0)):
                continue  # not done yet: still in their queue
            answers = sim.answer(rng, self.models, self.truths[a.item_id], model_of[name], first_shown=left)
            ctx = item_render_context(a.item)
            cleaned = rubric.validate(answers, item=ctx, presentation=a.presentation)
            derived = rubric.derive(cleaned, presentation=a.presentation)
            seconds = float(rng.lognormal(np.log(float(b.get("seconds", 40))), 0.5))
            when = self.now - timedelta(days=6) + timedelta(minutes=5 * len(annotations) + int(rng.integers(60)))
            annotations.append(
                writing.bulk_row(
                    writing.Submission(
                        assignment_id=a.id,
                        item_id=a.item_id,
                        rater_id=a.rater_id,
                        rubric_version_id=project.rubric_version_id,
                        answers=cleaned,
                        derived=derived,
                        at=when,
                        duration_ms=int(seconds * 1000),
                        locale="en",
                    )
                )
            )
            submitted.append((a.id, when, seconds))
        insert_rows(Annotation, writing.COLUMNS, annotations)
        Assignment.objects.filter(pk__in=[s[0] for s in submitted]).update(
            **writing.submitted_assignment(self.now - timedelta(days=1)), opened_at=self.now - timedelta(days=6)
        )
        for aid, reason in skipped:
            Assignment.objects.filter(pk=aid).update(status=Assignment.Status.SKIPPED, skip_reason=reason)
        self.write(
            f"{project.name}: {len(annotations)} simulated answers by {len(raters)} annotators, {len(skipped)} skipped"
        )

    def import_pool(self, project: Project) -> None:
        """The rest of the pool (``items.judge_only``): items that only the judges rate, as in
        practice (a judge rates the whole pool, people a sample of it), so that PPI++ has
        judge-only items to lean on. Imported after the sample is drawn (a later batch of the
        same pool), so the people's sample, plan and answers are those of the study file; every
        item but the attention checks is then the pool the judges rate."""
        records = item_records(self.preset, self.study, self.files.records(self.preset), pool=True)
        if records:
            data = "\n".join(json.dumps(r, ensure_ascii=False) for r in records)
            report = importing.import_items(
                project=project,
                data=data,
                data_format="jsonl",
                images=self.files.folder(self.preset) if self.preset.image_fields() else None,
            )
            if not report.ok:
                raise DomainError(f"the judge-only items of {self.preset.name} do not import: {report.errors[:3]}")
        for it in Item.objects.filter(project=project).exclude(pk__in=list(self.truths)).order_by("id"):
            if (it.meta or {}).get("qc") != "attention":
                self.truths[it.id] = self.truth(it)
        self.write(f"{project.name}: {len(self.truths)} items in the pool the judges rate")

    def truth(self, item: Item) -> sim.Truth:
        shift = 0.0
        for column, values in (self.study.get("shift") or {}).items():
            value = getattr(item, column, None) if hasattr(item, column) else (item.meta or {}).get(column)
            shift += float(values.get(str(value), 0.0))
        shift += self.system_difference(item, (self.study.get("systems") or {}).get("strength"))
        return sim.draw_truth(sim.rng_for(self.seed, 0, key(item)), self.models, item.data, shift)

    def system_difference(self, item: Item, by_system: dict[str, float] | None) -> float:
        """For a comparison of two named systems (the study's ``systems.fields``, e.g. ``model_a``
        and ``model_b``): the first system's value less the second's. With ``systems.strength``
        it moves the item's latent, so the truth prefers the stronger system; with a judge's
        ``system_bias`` it leans that judge towards a system wherever it is compared."""
        fields = (self.study.get("systems") or {}).get("fields")
        if not by_system or not fields:
            return 0.0
        first, second = (str(item.data.get(f, "")) for f in fields)
        return float(by_system.get(first, 0.0)) - float(by_system.get(second, 0.0))

    def attention_checks(self, project: Project, raters: dict[str, Rater]) -> None:
        """Each simulated annotator answers the attention check(s); who fails is in the study
        file (``qc.attention[].fail``). Through ``submit_annotation``: QC scores it there."""
        checks = (self.study.get("qc") or {}).get("attention", [])
        if not checks:
            return
        rubric = project.rubric_version.parsed()
        items = list(Item.objects.filter(project=project, meta__qc="attention").order_by("external_id"))
        failed = 0
        for check, item in zip(checks, items, strict=False):
            for pos, (name, rater) in enumerate(raters.items()):
                assignment = Assignment.objects.create(
                    project=project,
                    item=item,
                    rater=rater,
                    purpose=Assignment.Purpose.ATTENTION,
                    position=10_000 + pos,
                    presentation=draw_presentation(project, rubric, random.Random(self.seed + pos)),
                )
                given = check["fail_answers"] if name in check.get("fail", ()) else check["answers"]
                annotating.submit_annotation(assignment_id=assignment.id, rater=rater, answers=dict(given))
                failed += name in check.get("fail", ())
        self.write(f"{project.name}: attention checks answered, {failed} failed")

    def keep_open(self, project: Project, plan: AssignmentPlan, user) -> None:
        """The demo annotator joins the study with a few of its items open in their queue, given
        by hand as a researcher gives them (``studies.plans.hand_assign``), whatever the plan's
        rules say (they are there to try the annotate page), the pair order drawn from the
        study's seed."""
        projects.add_member(project=project, user=user, role="annotator")
        rater = projects.rater_for_user(user)
        offset = 0 if user.username == "annotator1" else KEEP_OPEN
        rng = random.Random(self.seed + offset)
        for item in plan.sample.items.order_by("id")[offset : offset + KEEP_OPEN]:
            plans.hand_assign(project=project, item=item, rater=rater, plan=plan, force=True, rng=rng)

    # ---------------------------------------------------------------- judges
    def judge(self, project: Project, spec: dict[str, Any], k: int) -> None:
        preset = self.preset
        model = sim.rater_models([spec], {})[0]
        questions = spec.get("questions")
        both = bool(spec.get("both_orders")) and preset.pair_order is not None
        config = create_judge_config(
            project=project,
            name=spec["name"],
            backend=spec.get("backend", "openai_chat"),
            model_id=spec.get("model_id", ""),
            questions=questions,
            params=dict(spec.get("params", {"temperature": 0})),
            both_orders=both,
            created_by=self.users["researcher"],
            price_prompt_per_1m=spec.get("price", [None, None])[0],
            price_completion_per_1m=spec.get("price", [None, None])[1],
        )
        questions = list(config.questions)
        rubric_part = judged_rubric(project, questions)
        items = list(Item.objects.filter(pk__in=list(self.truths)).order_by("id"))
        started = self.now - timedelta(hours=20 - k)
        run = JudgeRun.objects.create(
            config=config,
            project=project,
            item_ids=[it.id for it in items],
            total=len(items),
            chunk_size=16,
            queue="api",
            status=JudgeRun.Status.DONE,
            created_by=self.users["researcher"],
            started_at=started,
            finished_at=started + timedelta(seconds=int(len(items) * (2 if both else 1) * 1.4)),
            scope="every item but the attention checks",
        )
        outputs, judged = [], []
        tokens = spec.get("tokens", [900, 60])
        for it in items:
            rng = sim.rng_for(self.seed, 2 + k, 0, key(it))
            ctx = item_render_context(it)
            orders = [JudgeOutput.Order.ORIGINAL] + ([JudgeOutput.Order.SWAPPED] if both else [])
            answers = None
            for order in orders:
                swapped = order == JudgeOutput.Order.SWAPPED
                shown = self.first_shown(swapped)
                # a judge that favours a system sees its answers as better wherever they are
                leaning = self.system_difference(it, spec.get("system_bias"))
                rater = dataclasses.replace(model, bias=model.bias + leaning) if leaning else model
                given = sim.answer(rng, self.models, self.truths[it.id], rater, questions=questions, first_shown=shown)
                parsed, said = self.orders(given, swapped)
                parsed = rubric_part.validate(parsed, item=ctx)
                outputs.append(
                    (
                        run.id,
                        it.id,
                        0,
                        order,
                        self.raw(said, spec, rng),
                        json.dumps(parsed),
                        "",
                        int(rng.lognormal(np.log(spec.get("latency_ms", 1500)), 0.3)),
                        int(tokens[0] * rng.uniform(0.85, 1.15)),
                        int(tokens[1] * rng.uniform(0.7, 1.3)),
                        started,
                    )
                )
                if not swapped:
                    answers = parsed
            judged.append((it, answers, self.confidence(spec, k, it, answers, questions)))
        insert_rows(
            JudgeOutput,
            [
                "run",
                "item",
                "pass_index",
                "order",
                "raw_output",
                "parsed",
                "error",
                "latency_ms",
                "prompt_tokens",
                "completion_tokens",
                "created_at",
            ],
            outputs,
        )
        insert_rows(
            JudgeItemResult,
            ["run", "item", "status", "answers", "error", "created_at"],
            [(run.id, it.id, JudgeItemResult.Status.OK, json.dumps(ans), "", started) for it, ans, _ in judged],
        )
        # the judge rater's rating: a submitted regular assignment and its annotation per item,
        # the one writer's rows (annotation.writing), as judges.ratings.write_judge_annotation
        # writes them one by one
        ids = reserve_ids(Assignment, len(judged))
        insert_rows(
            Assignment,
            writing.ASSIGNMENT_COLUMNS,
            [
                writing.new_submitted_assignment_row(
                    aid,
                    project_id=project.id,
                    item_id=it.id,
                    rater_id=config.rater_id,
                    at=started,
                    created_at=started,
                    opened_at=started,
                )
                for aid, (it, _, _) in zip(ids, judged, strict=True)
            ],
        )
        insert_rows(
            Annotation,
            writing.COLUMNS,
            [
                writing.bulk_row(
                    writing.Submission(
                        assignment_id=aid,
                        item_id=it.id,
                        rater_id=config.rater_id,
                        rubric_version_id=project.rubric_version_id,
                        answers=ans,
                        derived=judge_derived(rubric_part, ans, None, conf),
                        at=started,
                    )
                )
                for aid, (it, ans, conf) in zip(ids, judged, strict=True)
            ],
        )
        self.write(f"{project.name}: judge {config.name!r} ran on {len(items)} items")

    def confidence(
        self, spec: dict[str, Any], k: int, item: Item, given: dict[str, Any], questions: list[str]
    ) -> dict[str, float] | None:
        """The judge's stated confidence in its answer (``judge_metrics``, the uncertainty an
        active sample reads), when the study file gives it one (``confidence``): drawn from a
        stream of its own, so the judge's answers are those it gives without one."""
        how = spec.get("confidence")
        if not how:
            return None
        rng = sim.rng_for(self.seed, 20 + k, 0, key(item))
        exact = sim.answer(
            rng,
            self.models,
            self.truths[item.id],
            sim.RaterModel(name="truth"),
            questions=questions,
            first_shown=self.first_shown(False),
            exact=True,
        )
        return {sim.CONFIDENCE_METRIC: sim.confidence(rng, given, exact, how)}

    def first_shown(self, swapped: bool) -> dict[str, str]:
        """What a judge is shown first: each pairwise question's first field (the item's own
        order, or the pair swapped), and for a two-score verdict (``PairOrder.verdict``) the
        question about what is shown first (a position bias favours it)."""
        out = {}
        for q in self.preset.rubric["questions"]:
            if q["type"] == "pairwise":
                out[q["id"]] = q["pair"][1] if swapped else q["pair"][0]
        pair = self.preset.pair_order
        if pair is not None and len(pair.verdict) == 2:
            out["__pair__"] = pair.verdict[1] if swapped else pair.verdict[0]
        return out

    def orders(self, given: dict[str, Any], swapped: bool) -> tuple[dict[str, Any], dict[str, Any]]:
        """(the answers in the item's own order, what the model said). A pairwise answer is
        given as seen (left / right of the order shown), a score about the item's own members;
        the swap is :class:`benchmarks.base.PairOrder`'s, as ``judges.orders`` maps it back."""
        pair = self.preset.pair_order
        if not swapped or pair is None:
            return given, given
        moved = dict(given)
        for a, b in pair.swap_questions:
            if a in given and b in given:
                moved[a], moved[b] = given[b], given[a]
        for q, (x, y) in pair.swap_values.items():
            if given.get(q) in (x, y):
                moved[q] = y if given[q] == x else x
        seen = {q["id"] for q in self.preset.rubric["questions"] if q["type"] == "pairwise"}
        parsed = {q: (moved[q] if q in seen else v) for q, v in given.items()}
        said = {q: (v if q in seen else moved[q]) for q, v in given.items()}
        return parsed, said

    def raw(self, answers: dict[str, Any], spec: dict[str, Any], rng) -> str:
        """What the model said, in the shape the preset's parser reads."""
        parser = spec.get("parser") or (self.preset.judge_prompt.parser if self.preset.judge_prompt else "json")
        notes = spec.get("notes") or ["The evidence is clear."]
        note = notes[int(rng.integers(len(notes)))]
        if parser == "score_is":
            return "\n".join(f"{q}: {note} The score is {v}." for q, v in answers.items())
        if parser == "choice":
            # a pairwise question's verdict as the MT-Bench prompt asks for it (judges.parsers:
            # [[A]] the answer shown first, [[B]] the second, [[C]] a tie)
            pairwise = {q["id"] for q in self.preset.rubric["questions"] if q["type"] == "pairwise"}
            verdict = {"left": "[[A]]", "right": "[[B]]", "tie": "[[C]]"}
            return "\n".join(
                f"{note} {verdict[v]}" if q in pairwise and v in verdict else f"{q}: {v}" for q, v in answers.items()
            )
        return json.dumps({**answers, "explanation": note}, ensure_ascii=False)


def seed_studies(presets, users, files: DemoFiles, write) -> None:
    """One simulated study per preset that declares one, unless it exists (idempotent)."""
    for preset in presets:
        study = preset.demo_study
        if not study or Project.objects.filter(preset_key=preset.key, name=project_name(preset)).exists():
            continue
        Seeder(preset, dict(study), users, files, write).run()
