"""``seed_demo`` seeds a simulated study for every preset (docs/demo.md): every table of the
protocol has values, every LaTeX table renders, and each protocol has one model judge that passes
the alt-test and one that fails it. The simulation is deterministic: the same answers twice."""

from __future__ import annotations

import io
import json
from collections import Counter

import pytest
from django.core.management import call_command

from agreement.validation import compute_tables
from annotation.models import Annotation, Assignment, Item, Project
from benchmarks.registry import PRESETS
from demo import simulation as sim
from demo.studies import PREFIX
from hvstats import tables as table_formats
from judges.models import JudgeConfig, JudgeOutput, JudgeRun
from studies.models import AssignmentPlan, Sample
from tests.agreement.latex import compile_latex

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded(shared_demo, db):
    """The demo seeded once for TestOnTheDemo (tests/conftest.py, shared_demo), read afresh."""
    return {p.preset_key: p for p in Project.objects.filter(name__startswith=PREFIX)}


def verdicts(table_json: dict) -> dict[str, Counter]:
    """judge -> Counter of its alt-test verdicts ("passes", "fails", "no verdict")."""
    out: dict[str, Counter] = {}
    for row in table_json["rows"]:
        judge = row["label"].rsplit(": ", 1)[0]
        out.setdefault(judge, Counter())[row["cells"][0]["value"]] += 1
    return out


def test_the_simulation_is_deterministic():
    preset = PRESETS["valueground.pair_quality"]
    models = sim.question_models(preset.rubric["questions"], preset.demo_study["questions"])
    raters = sim.rater_models(preset.demo_study["annotators"], preset.demo_study["group_bias"])

    def draw():
        truth = sim.draw_truth(sim.rng_for(1, 0, 7), models, {})
        return [sim.answer(sim.rng_for(1, 1, k, 7), models, truth, r) for k, r in enumerate(raters)]

    assert draw() == draw()


class TestOnTheDemo:
    """The whole demo, seeded once for the class (tests/conftest.py, shared_demo)."""

    def test_every_preset_has_a_study_with_tables_and_verdicts(self, seeded):
        assert set(seeded) == set(PRESETS)
        for key, project in seeded.items():
            assert project.options.get("demo") and project.options.get("simulated")
            # the design that produced the data: a sample and a plan of the paper's k
            assert Sample.objects.filter(project=project).count() == 1
            plan = AssignmentPlan.objects.get(project=project)
            assert plan.k == project.k_per_item
            tables = compute_tables(project, bootstrap=50)
            keys = [t.key for t in tables]
            assert "judge-verdicts" in keys and len(keys) >= 2, (key, keys)
            for t in tables:
                assert t.rows, (key, t.key)
                assert any(c.value is not None for r in t.rows for c in r.cells), (key, t.key)
            latex = table_formats.to_latex(tables)
            assert latex.count("\\begin{table}") == len(tables), key
            as_json = {t["key"]: t for t in table_formats.to_json(tables)}
            per_judge = verdicts(as_json["judge-verdicts"])
            good = [j for j, c in per_judge.items() if c["passes"] > c["fails"]]
            bad = [j for j, c in per_judge.items() if c["fails"] > c["passes"]]
            assert len(good) == 1 and len(bad) == 1, (key, per_judge)
            # every simulated annotator rated at least 30 items (the alt-test's minimum)
            per_rater = Counter(
                Annotation.objects.filter(
                    item__project=project, rater__kind="human", rater__user__username__startswith="sim-"
                )
                .filter(assignment__purpose="regular")
                .values_list("rater__name", flat=True)
            )
            assert per_rater and min(per_rater.values()) >= 30, (key, per_rater)
            # annotator1 and annotator2 keep open items to try the protocol
            for user in ("annotator1", "annotator2"):
                assert Assignment.objects.filter(project=project, rater__name=user, status="assigned").exists()
            # judges with a run, raw outputs, tokens and a price
            for config in JudgeConfig.objects.filter(project=project, backend="openai_chat"):
                run = JudgeRun.objects.get(config=config)
                assert run.status == "done"
                out = JudgeOutput.objects.filter(run=run).first()
                assert out.raw_output and out.prompt_tokens and config.price_prompt_per_1m is not None

    @pytest.mark.slow  # pdflatex
    def test_every_demo_projects_latex_compiles_in_one_document(self, seeded):
        """Issue 35: the LaTeX download of every demo project (the simulated studies and the
        small hand-made ones) compiles with pdflatex, the CQ-Bench story study's verdicts table
        with its warnings included; one document (a section per project) so that pdflatex
        starts once."""
        parts = []
        for project in Project.objects.filter(options__demo=True).order_by("id"):
            tables = compute_tables(project, bootstrap=20)
            if tables:
                parts.append(r"\section*{" + table_formats.latex_escape(project.name) + "}")
                parts.append(table_formats.render(tables, "latex"))
                parts.append(r"\clearpage")
        assert len(parts) >= 3 * len(seeded)
        story = compute_tables(seeded["cqbench.story"], bootstrap=20)
        verdicts_notes = next(t for t in story if t.key == "judge-verdicts").notes
        assert verdicts_notes  # the warnings that once made its caption too long for pdflatex
        log = compile_latex("\n".join(parts))
        assert "Output written" in log

    def test_a_pairwise_judge_shows_a_position_preference(self, seeded):
        from judges.bias import run_bias_checks

        biased = JudgeConfig.objects.filter(both_orders=True, project__name__startswith=PREFIX)
        assert biased.exists()
        checks = [run_bias_checks(JudgeRun.objects.get(config=c), n_boot=50) for c in biased]
        assert any(c.get("position") for c in checks)

    def test_seeding_twice_changes_nothing(self, seeded):
        before = (Annotation.objects.count(), Assignment.objects.count(), JudgeOutput.objects.count())
        call_command("seed_demo", stdout=io.StringIO())
        assert (Annotation.objects.count(), Assignment.objects.count(), JudgeOutput.objects.count()) == before

    def test_the_judges_rate_the_whole_pool_and_state_a_confidence(self, seeded):
        """As in practice the judges rate the pool and people a sample of it (issue 34): every
        study has items only the judges rated, as many as the study file asks plus the pool
        items the sample left out; every judge states a confidence in [0, 1] on every item."""
        for key, project in seeded.items():
            spec = PRESETS[key].demo_study["items"]
            regular = Annotation.objects.filter(item__project=project, assignment__purpose="regular")
            human = set(regular.filter(rater__kind="human").values_list("item_id", flat=True))
            for config in JudgeConfig.objects.filter(project=project, backend="openai_chat"):
                mine = regular.filter(rater_id=config.rater_id)
                rated = set(mine.values_list("item_id", flat=True))
                pool = {
                    i
                    for i, meta in Item.objects.filter(project=project).values_list("id", "meta")
                    if (meta or {}).get("qc") is None
                }
                assert rated == pool and len(pool) == spec["count"] + spec["judge_only"], (key, config.name)
                assert len(rated - human) >= spec["judge_only"], (key, config.name)
                confidence = [d["judge_metrics"]["confidence"] for d in mine.values_list("derived", flat=True)]
                assert len(confidence) == len(rated) and all(0 <= c <= 1 for c in confidence), (key, config.name)

    def test_the_pairwise_demo_has_a_judge_whose_ranking_differs_from_peoples(self, seeded):
        """Issue 36: the pairwise-preference study's systems ranked by their share of won votes
        (a tie half a win), counted here from the stored votes: people and the GPT-4 judge put
        gpt-4 first; the Claude judge, which favours its own answers, puts claude-v1 first."""
        project = seeded["arena.preference"]
        votes = Annotation.objects.filter(item__project=project, assignment__purpose="regular").select_related(
            "rater", "item", "assignment"
        )
        human_items = {a.item_id for a in votes if a.rater.kind == "human"}
        score: dict[str, Counter] = {}
        played: dict[str, Counter] = {}
        for a in votes:
            if a.item_id not in human_items or a.answers.get("preference") is None:
                continue
            who = "people" if a.rater.kind == "human" else a.rater.name
            shown = ((a.assignment.presentation or {}).get("pair_order") or {}).get("preference")
            first, second = shown or ["response_a", "response_b"]  # a judge's stored vote: the item's order
            side = a.answers["preference"]
            system = {"response_a": a.item.data["model_a"], "response_b": a.item.data["model_b"]}
            for s in system.values():
                played.setdefault(who, Counter())[s] += 1
            won = score.setdefault(who, Counter())
            if side == "tie":
                for s in system.values():
                    won[s] += 0.5
            else:
                won[system[first if side == "left" else second]] += 1

        def top(who: str) -> str:
            return max(played[who], key=lambda s: score[who][s] / played[who][s])

        judges = {c.name: c.rater.name for c in JudgeConfig.objects.filter(project=project).select_related("rater")}
        assert top("people") == "gpt-4"
        assert top(judges["GPT-4 pair judge"]) == "gpt-4"
        assert top(judges["Claude-v1 pair judge"]) == "claude-v1"

    def test_the_pairwise_judges_replies_read_back_as_stored(self, seeded):
        """The demo's pairwise judges answer as the MT-Bench prompt asks ("... [[A]]"), and the
        judges' parser reads each stored reply back to the answer stored with it (as shown)."""
        from annotation.rubric import Rubric
        from judges.parsers import parse_question_choice

        project = seeded["arena.preference"]
        question = Rubric.from_schema(PRESETS["arena.preference"].rubric).question("preference")
        outputs = JudgeOutput.objects.filter(run__project=project)
        assert outputs.exists()
        for out in outputs:
            said = parse_question_choice(out.raw_output, question)["preference"]
            stored = json.loads(out.parsed)["preference"] if isinstance(out.parsed, str) else out.parsed["preference"]
            if out.order == JudgeOutput.Order.SWAPPED:  # stored in the item's order, said as shown
                said = {"left": "right", "right": "left"}.get(said, said)
            assert out.raw_output.rstrip().endswith(("[[A]]", "[[B]]", "[[C]]")) and said == stored
