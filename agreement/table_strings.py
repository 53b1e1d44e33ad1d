"""The words of the validation tables, translated on the page (issue 25).

The tables are built in the pure packages (``hvstats.tables``, ``hvstats.verdicts``,
``benchmarks/<paper>/tables.py``), which import no Django: they write the paper's English, and
the downloads (CSV, LaTeX, Markdown from the API and the ``validation_report`` command) keep it.
The page translates each table's title, headers, row labels, text cells, captions, notes and
cell notes here, through two catalogues of msgids marked with ``gettext_noop``:

- :data:`MESSAGES`: texts the tables write as they are (titles, headers, captions);
- :data:`TEMPLATES`: texts with a variable part (a judge's name, a group, a number): each is an
  English template with named placeholders, matched against the text; the matched parts that
  are themselves known texts (``Total`` in ``China: Total``) are translated too, the others (a
  judge's or a country's name) are shown as they are.

:func:`is_known` says whether a text is covered; ``tests/agreement/test_table_strings.py`` checks
that every text the presets' tables can produce is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from django.utils.translation import gettext, gettext_noop, ngettext

from core.numbers import localize_numbers
from studies.templatetags.study_labels import sample_name

#: a template's part that is a number ("0.2"): written as the page's language writes it
NUMBER = re.compile(r"[-−+]?\d+\.\d+")

# --------------------------------------------------------------------------- exact texts
MESSAGES: tuple[str, ...] = (
    # shared
    gettext_noop("Pearson r"),
    gettext_noop("Spearman ρ"),
    gettext_noop("Total"),
    gettext_noop("Field"),
    gettext_noop("All"),
    gettext_noop("n"),
    # the agreement page's list of disagreements (agreement.services.judge_drilldown)
    gettext_noop("share of humans whose label differs from the judge's"),
    # ValueGround
    gettext_noop("Table 4: Agreement between the automatic judge and human annotations"),
    gettext_noop(
        "Agreement between the automatic judge and human annotations (Pearson r, Spearman ρ; 95% "
        "bootstrap CI over items in brackets). Human agreement: each annotator vs the mean of the "
        "other annotators (leave-one-annotator-out), averaged (the paper's reference); pooled slot vs "
        "slot: the first-assigned annotator of each pair vs the second (and so on), pooled over pairs, "
        "averaged over slot pairs. Total = (Q1/2 + Q2/2 + Q3/2 + Q4)/4 (Eq. 8). Items: a judge's columns "
        "use the items it and at least one annotator rated (its n column); the human agreement the items "
        "two or more annotators rated; n = the items an annotator rated (an item only a judge rated "
        "counts nowhere)."
    ),
    gettext_noop("Human agreement: Pearson r"),
    gettext_noop("Human agreement: Spearman ρ"),
    gettext_noop("Human agreement, pooled slot vs slot: Pearson r"),
    gettext_noop("Human agreement, pooled slot vs slot: Spearman ρ"),
    gettext_noop("Table 4 by annotator group (nationality)"),
    gettext_noop("Group: field"),
    gettext_noop("(no nationality)"),
    gettext_noop("Table 4 by generation backbone"),
    gettext_noop("As Table 4, on the pairs of each generation backbone only."),
    gettext_noop("Backbone: field"),
    # BLEnD-Vis
    gettext_noop("Image validation: Good / Bad by 2-of-3 majority"),
    gettext_noop("Template validation: Good / Bad by 2-of-3 majority"),
    gettext_noop("Good"),
    gettext_noop("Bad"),
    gettext_noop("Bad rate"),
    gettext_noop("Images with a majority"),
    gettext_noop("Images without (tie)"),
    gettext_noop("Templates with a majority"),
    gettext_noop("Templates without (tie)"),
    gettext_noop("Majority of the annotators"),
    gettext_noop("Decision"),
    gettext_noop(
        "Each item is Good or Bad by the majority of its annotators (2 of 3); 95% bootstrap CI of the Bad "
        "rate over images. Items with a tied vote or fewer than two votes have no majority."
    ),
    gettext_noop(
        "Each item is Good or Bad by the majority of its annotators (2 of 3); 95% bootstrap CI of the Bad "
        "rate over templates. Items with a tied vote or fewer than two votes have no majority."
    ),
    gettext_noop("Clearly Wrong Subject"),
    gettext_noop("Misleading or Ambiguous Representation"),
    gettext_noop("Unusably Distorted"),
    gettext_noop("Inaccurate Regional Representation"),
    gettext_noop("Image validation: reasons given for Bad"),
    gettext_noop("Bad judgements"),
    gettext_noop("Share of Bad judgements"),
    gettext_noop("Every annotator's Bad judgement with its failure category; 95% bootstrap CIs over judgements."),
    gettext_noop("Failure category"),
    # Cultural Counterfactuals
    gettext_noop("Context group cannot be discerned in the source context image"),
    gettext_noop("Context group cannot be discerned only in the counterfactual image"),
    gettext_noop("The orientation of the source context image is incorrect"),
    gettext_noop("The person does not appear in the counterfactual image"),
    gettext_noop("The person's social attributes (age, race, or gender) are incorrect"),
    gettext_noop("The source context image does not appear in the counterfactual image"),
    gettext_noop("Any failure flag"),
    gettext_noop("n judgements"),
    gettext_noop("Failure flags: share of judgements with each flag, overall and per dimension"),
    gettext_noop("All dimensions"),
    gettext_noop(
        "Share of human judgements that tick each failure flag (a flag never ticked is 0%); "
        "95% bootstrap CIs over judgements. Paper: 9.7%, 4.3%, 1.7%, 0.3%, 0%, 0%."
    ),
    gettext_noop("Flag"),
    gettext_noop("Model judges vs the humans on the flags each judge decides"),
    gettext_noop("Cohen's κ vs human majority"),
    gettext_noop("Agreement"),
    gettext_noop("Judge flag rate"),
    gettext_noop("Human flag rate"),
    gettext_noop("n images"),
    gettext_noop(
        "Each judge's flag against the human majority flag of the same image (images without a "
        "majority left out); 95% bootstrap CIs over images. The paper compared none of its judges with people."
    ),
    gettext_noop("Judge: flag"),
    # CQ-Bench
    gettext_noop("Reflection"),
    gettext_noop("Consistency"),
    gettext_noop("Cohen's κ between annotators"),
    gettext_noop("Cohen's κ, annotator 1 vs annotator 2 (pooled slots)"),
    gettext_noop("n (story, value) units"),
    gettext_noop("Human validation of the stories: reflection and consistency of the values"),
    gettext_noop(
        "Cohen's κ between the annotators over all (story, value) units (the mean over pairs "
        "of annotators when there are more than two), and pooled over slots: the rating of each "
        "story's first-assigned annotator vs its second's, whoever they are (the paper's setting: "
        "50 volunteers, two per story). Agreement with the model: the share of human "
        "judgements that are positive on the values the model judged positive (the paper's 94.5% / "
        "92.5%), each annotator's judgement counted. 95% bootstrap CIs over (story, value) units."
    ),
    gettext_noop("Value judgement"),
    gettext_noop("Rewrite improvement (0-5)"),
    gettext_noop("Naturalness (1-5)"),
    gettext_noop("rated ≥ 4"),
    gettext_noop("natural (≥ 4)"),
    gettext_noop("Human ratings of the rewrites and of naturalness"),
    gettext_noop("Mean"),
    gettext_noop("Share"),
    gettext_noop("Share of"),
    gettext_noop(
        "Means and shares over the human judgements (one per rewrite, one per story); 95% "
        "bootstrap CIs over judgements. Paper: mean rewrite improvement 3.28, naturalness mean 3.63."
    ),
    gettext_noop("Rating"),
    gettext_noop("All annotators"),
    gettext_noop("Turing-style test: can annotators tell the human-written utterance?"),
    gettext_noop("Accuracy (tie = 0)"),
    gettext_noop("Accuracy over non-ties"),
    gettext_noop("Tie rate"),
    gettext_noop("Binomial p (non-ties vs 0.5)"),
    gettext_noop("n answers"),
    gettext_noop(
        "A tie scores 0 (paper: 44.8%, below the 50% chance level). p: exact two-sided binomial "
        "test of the correct answers among the non-tie answers against 0.5. 95% bootstrap CIs over answers."
    ),
    gettext_noop("Annotators"),
    gettext_noop("Exact agreement with people (per ground-truth value)"),
    gettext_noop("Pearson r of the story score with the mean person"),
    gettext_noop("Mean story score"),
    gettext_noop("n (story, ground-truth value) units"),
    gettext_noop("People (pairs of annotators)"),
    # pairwise preference (benchmarks/arena/tables.py)
    gettext_noop("Agreement on the votes, with and without ties"),
    gettext_noop("Agreement with ties (S1)"),
    gettext_noop("Agreement without ties (S2)"),
    gettext_noop("n items"),
    gettext_noop("Human vs human"),
    gettext_noop("Raters"),
    gettext_noop(
        "Zheng et al. Sec. 4.2: the probability that two raters, two people or a judge and a person, agree on a "
        "randomly chosen item: per item the share of agreeing pairs of votes, averaged over the items. S1 counts a "
        "tie as a vote; S2 leaves the tie votes out. Paper (MT-Bench, Table 5): GPT-4 vs human 0.66 (S1) and 0.85 "
        "(S2); human vs human 0.63 and 0.81."
    ),
    gettext_noop("Value extraction: the LLM judge vs people grading the same predictions"),
    gettext_noop(
        "Each ground-truth value scored 1 (fully presented), 0.5 (partially presented) or 0 (not "
        "mentioned) in the predicted values (Sec. 4.1, S(v_i, V^)); the story score is their mean (recall). "
        "Exact agreement: the share of the people's scores that equal the judge's score of the same (story, "
        "ground-truth value), each person's score counted once; for people, over pairs of annotators. Paper: "
        "GPT-4o vs human annotators on 25 stories, agreement score 0.864 (the paper does not define the "
        "measure; exact agreement of the scores is ours). 95% bootstrap CIs over (story, value) units, and over "
        "stories for Pearson r."
    ),
    gettext_noop("Grader"),
    gettext_noop("Value-extraction score by extracting model (Table 3, VE)"),
    gettext_noop("People: mean story score"),
    gettext_noop("n stories"),
    gettext_noop(
        "The mean story score (mean S(v_i, V^) over a story's ground-truth values) of each "
        "extracting model (the items' generator), as graded by the people (their mean per story) and "
        "by each judge. Paper, Table 3 VE row: e.g. Qwen 2.5 32B 0.629, o3-mini 0.598, o3 0.732. 95% "
        "bootstrap CIs over stories."
    ),
    gettext_noop("Extracting model"),
    # CULTIVate
    gettext_noop("Global North"),
    gettext_noop("Global South"),
    gettext_noop("Human (rater 1 vs rater 2)"),
    gettext_noop("Table 2: Spearman correlation with GT-FAITH by region"),
    gettext_noop("n images (All)"),
    gettext_noop(
        "Spearman ρ of every model rater's scores (judge answers and imported metrics) with "
        "GT-FAITH, the mean of the image's human GT-FAITH ratings, on the images of each region. "
        "Human: rater 1 vs rater 2 of each image (assignment order), pooled over images. 95% "
        "bootstrap CIs over images. Paper (All): GPT-4o 0.48, FAITH (InternVL3) 0.47, Human 0.58."
    ),
    gettext_noop("Metric / judge"),
    gettext_noop("Table 6: Per-model correlation with GT-FAITH"),
    gettext_noop("Avg."),
    gettext_noop(
        "As Table 2, on the images of each T2I model; Avg. = the mean over the models "
        "(its CI from the models' independent bootstraps). Paper (Avg.): GPT-4o 0.43, ALIGN "
        "(InternVL3) 0.38, Human 0.55."
    ),
    gettext_noop("Table 3: Necessity of composite metrics (Spearman with GT-FAITH)"),
    gettext_noop(
        "Spearman ρ with GT-FAITH of each AHEaD judge's ALIGN (Eq. 1), ALIGN+HAL (mean of ALIGN and "
        "1 - HAL) and FAITH (Eq. 5, stored as its GT-FAITH answer 1 + 4 FAITH, which ranks alike) on the "
        "images of each region. 95% bootstrap CIs over images. Paper (All, InternVL3): ALIGN 0.41, "
        "ALIGN+HAL 0.44, FAITH 0.47."
    ),
    gettext_noop("AHEaD judge"),
    gettext_noop("Inter-rater agreement per country (App. A.4)"),
    gettext_noop("Region"),
    gettext_noop("Krippendorff's α (ordinal)"),
    gettext_noop("Cohen's κ, rater 1 vs rater 2"),
    gettext_noop("n raters"),
    gettext_noop(
        "GT-FAITH ratings of the images of each country: Krippendorff's α at the ordinal level "
        "over the images rated twice, and Cohen's κ (unweighted) between the first and the second "
        "rater of each image (assignment order; the mean over slot pairs for images with more raters). "
        "95% bootstrap CIs over images. Paper: α 0.15-0.62."
    ),
    gettext_noop("Country"),
    gettext_noop("Inter-rater agreement by region (App. A.4)"),
    gettext_noop("Mean α over countries"),
    gettext_noop("SD of α over countries"),
    gettext_noop("Min α"),
    gettext_noop("Max α"),
    gettext_noop("Mean κ over countries"),
    gettext_noop("Cohen's κ, rater 1 vs rater 2 (pooled)"),
    gettext_noop("n countries"),
    gettext_noop(
        "Summaries over the countries of each region of the per-country values (SD with ddof=1; "
        "CIs from the countries' independent bootstraps), and Cohen's κ between the first and the "
        "second rater pooled over the region's images. Paper: α SD 0.13, GN mean 0.28, GS mean 0.35; "
        "κ between the two annotator groups, mean 0.50."
    ),
    gettext_noop("Table 13: Human evaluation scores by country"),
    gettext_noop(
        "Mean and standard deviation (ddof=1) on the 5-point scales over the images of each "
        "country and region, an image's score being the mean of its raters' ratings. 95% bootstrap "
        "CIs of the means over images."
    ),
    gettext_noop("Country / region"),
    gettext_noop("Average over countries"),
    gettext_noop("All judgements"),
    gettext_noop("not averaged over countries"),
    gettext_noop("Table 11: LLM-generated descriptors validation by humans"),
    gettext_noop("Precision (marked correct)"),
    gettext_noop("Mean coverage (1-5)"),
    gettext_noop("Share reporting a missing descriptor"),
    gettext_noop("Forms reporting a missing descriptor"),
    gettext_noop("n descriptor judgements"),
    gettext_noop("n forms"),
    gettext_noop(
        "Precision: the share of the human descriptor judgements marked correct; coverage: "
        "the mean overall coverage rating; missing: the share of forms listing a missing "
        "descriptor. Average over countries: the mean of the per-country precisions (CI from the "
        "countries' independent bootstraps). 95% bootstrap CIs over judgements / forms. Paper: "
        "precision 90.27% on average (minimum 85.21%, Iran), coverage 4.5/5, 26 of 378 "
        "annotators reported a missing descriptor."
    ),
    # the verdicts table (hvstats.verdicts)
    gettext_noop("Judge verdicts: alternative annotator test and prediction-powered mean"),
    gettext_noop("Alt-test"),
    gettext_noop("Winning rate ω"),
    gettext_noop("Advantage probability ρ"),
    gettext_noop("Humans tested"),
    gettext_noop("PPI mean"),
    gettext_noop("Human-only mean"),
    gettext_noop("Human-rated items"),
    gettext_noop("Judge-only items"),
    gettext_noop("Human labels saved (PPI++)"),
    gettext_noop(
        "Human labels saved (PPI++): the human-rated items people alone would need for the half-width of the "
        "PPI++ interval on this pool (the ratio of the human-only to the PPI++ variance), minus those at hand."
    ),
    gettext_noop("A judge's human labels saved is the fewest over its fields with a PPI++ mean."),
    gettext_noop("none: the judge does not narrow the interval"),
    gettext_noop("a cost: with the judge the interval is wider"),
    gettext_noop("Judge: field"),
    gettext_noop("not tested"),
    gettext_noop("no verdict"),
    gettext_noop("passes"),
    gettext_noop("fails"),
    gettext_noop("PPI applies to numeric and two-label fields"),
    gettext_noop(
        "Alt-test (Calderon, Reichart and Dror 2025): the judge passes when it is as good as or better than "
        "at least half of the humans (winning rate ω ≥ 0.5; Benjamini-Yekutieli at q = 0.05); ρ = share of "
        "items where it scores at least as well as the held-out human (accuracy for categorical fields, "
        "negative RMSE otherwise). The alt-test uses the items with at least two human ratings and a judge "
        "rating; humans with fewer than 30 such items are not tested (Humans tested). PPI mean (PPI++, "
        "power-tuned λ, 95% CI): the field's mean over every item the judge rated, the human-rated ones "
        "labelled by the mean of their human ratings (Human-rated items) and the judge-only ones by the "
        "judge (Judge-only items); the human-only mean beside it covers only the human-rated items the "
        "judge also rated (items no judge rated are in neither). Two-label fields count the second label "
        "as 1. A note in a verdict cell (no variation, one category only, too few humans, no overlap) says "
        "when the test cannot tell."
    ),
    gettext_noop(
        # xgettext:no-python-format
        "A share of 0% or 100% gets the exact binomial (Clopper-Pearson) 95% interval, since the "
        "bootstrap's has zero width there."
    ),
    # the answers table (hvstats.verdicts.answers_table)
    gettext_noop("One answer per judge: can it replace the annotators"),
    gettext_noop("Answer"),
    gettext_noop("Stability"),
    gettext_noop("Borderline"),
    gettext_noop("Items"),
    gettext_noop("Judge"),
    gettext_noop("yes"),
    gettext_noop("no"),
    gettext_noop("can replace the annotators"),
    gettext_noop("on some fields only"),
    gettext_noop("cannot replace the annotators"),
    gettext_noop("cannot tell"),
    gettext_noop("the judge rated no item a human rated: the test cannot tell"),
    gettext_noop("no variation: the test cannot tell (every rating is the same value)"),
    gettext_noop("one category only: every human rating is the same value, the humans never disagree"),
    # reasons a value is undefined (cell notes)
    gettext_noop("undefined"),
    gettext_noop("fewer than two raters"),
    gettext_noop("fewer than two human raters"),
    gettext_noop("fewer than two annotators"),
    gettext_noop("no human raters to compare with"),
    gettext_noop("no item has two or more ratings"),
    gettext_noop("fewer than two items rated by both"),
    gettext_noop("fewer than two items rated by both raters"),
    gettext_noop("fewer than three items rated by both"),
    gettext_noop("fewer than two filled slots"),
    gettext_noop("no values"),
    gettext_noop("no answers"),
    gettext_noop("no decisions"),
    gettext_noop("no pairable items or no variation"),
    gettext_noop("a correlation is undefined"),
    gettext_noop("coefficient not computable for these data"),
    gettext_noop("a single category: chance agreement is 1"),
    gettext_noop("half means are constant or too few items"),
    gettext_noop("fewer than 2 labelled items"),
    gettext_noop("no unlabelled items (judge-only items)"),
    gettext_noop("no unit scored by the judge and a person"),
    gettext_noop("fewer than three stories or no variation"),
    gettext_noop("no unit scored by two people"),
    gettext_noop("the people are the reference"),
    # active samples (agreement.active, hvstats.active): the estimates' table, its notes and reasons
    gettext_noop("active estimate [95% CI]"),
    gettext_noop("active estimate [95% CS]"),
    gettext_noop("human labels"),
    gettext_noop("half-width"),
    gettext_noop("uniform PPI half-width (same labels)"),
    gettext_noop("humans-only half-width (same labels)"),
    gettext_noop("labels saved vs PPI"),
    gettext_noop("labels saved vs humans only"),
    gettext_noop(
        "active inference (Zrnic and Candes, ICML 2024): mean_i(lambda f_i + (Y_i - lambda f_i) xi_i / pi_i), "
        "power-tuned lambda (1 below 200 labels), CLT interval; valid for a sample drawn with the given pi (fixed in advance)"
    ),
    gettext_noop(
        # xgettext:no-python-format
        "95% CLT interval of the active estimator (Zrnic and Candes, ICML 2024): valid as the number of items "
        "grows for a sample drawn with the stored probabilities, the rounds fixed in advance; each round's "
        "probabilities computed from earlier rounds' labels only (martingale CLT)."
    ),
    gettext_noop(
        "asymptotic confidence sequence (Waudby-Smith et al., 2024): the interval at a round chosen by "
        "the stopping rule covers with probability tending to 1 - alpha as items grow; not a finite-sample "
        "guarantee. The fixed-sample CLT interval ('ci') is valid only when the number of rounds was fixed in advance."
    ),
    gettext_noop("the active estimate has zero estimated variance"),
    gettext_noop("not applicable: a nominal field with more than two labels"),
    gettext_noop("the design's judge has no ratings in this project any more"),
    gettext_noop("round 1 is still being labelled: the estimate needs a human rating of every drawn item"),
    gettext_noop("the judge rated fewer than 2 items of the design"),
    # the uncertainties a judge offers (judges.uncertainty.sources), stored with each round
    gettext_noop("disagreement across the judge's passes / members"),
    gettext_noop("none (uniform: every item alike)"),
    # notes of the active estimates' tables (agreement.active.CLIPPED_NOTE, NEGATIVE_SAVING_NOTE)
    gettext_noop(
        "intervals that ran past the field's scale are cut to it: the mean lies within the scale, so the cut "
        "interval covers whenever the uncut one does (the half-widths are the uncut ones)"
    ),
    gettext_noop(
        "a negative number of labels saved is a cost: uniform sampling would have reached the same precision "
        "with fewer labels"
    ),
    # the uncertainties a judge does not offer, and why (judges.uncertainty.missing_sources)
    gettext_noop("1 - confidence, or a stored uncertainty"),
    gettext_noop("the judge stored one answer per item: run it with several passes or as an ensemble"),
    gettext_noop("the judge stored no confidence or other number with its ratings: import one with its outputs"),
    gettext_noop("choose the rubric field whose answers' spread is the uncertainty"),
    # Does the benchmark's conclusion hold? (hvstats.systems, issue 36)
    gettext_noop("Human-only"),
    gettext_noop("Judge-only"),
    gettext_noop("PPI++"),
    gettext_noop("PPI++ rank-set"),
    gettext_noop("Judge-only rank-set"),
    gettext_noop("Judge-only rank"),
    gettext_noop("Inside the PPI++ rank-set"),
    gettext_noop("PPI++ A - B"),
    gettext_noop("Human-only A - B"),
    gettext_noop("Judge-only A - B"),
    gettext_noop("Conclusion"),
    gettext_noop("Judge-only says"),
    gettext_noop("Judge-only holds"),
    gettext_noop("Kendall τ"),
    gettext_noop("Judge"),
    gettext_noop("Finding"),
    gettext_noop("none"),
    gettext_noop("Pairs ordered differently"),
    gettext_noop("Findings: named comparisons of item groups"),
    gettext_noop("needs ratings by people and by a judge"),
    # rank-sets of a pairwise-preference study (hvstats.systems.pairwise_rank_table, issue 36)
    gettext_noop("Does the benchmark's conclusion hold? Rank-sets from pairwise comparisons"),
    gettext_noop("Human-only win rate"),
    gettext_noop("Human-only rank-set"),
    gettext_noop("Judge-only win rate"),
    gettext_noop("Prediction-powered win rate"),
    gettext_noop("Prediction-powered rank-set"),
    gettext_noop("System"),
    gettext_noop("no comparison"),
)

# ------------------------------------------------------------------------- texts with variables
#: ``%(name)s`` matches any text (translated when it is a known text), ``%(name)d`` a number;
#: a literal percent sign is written ``%%``
TEMPLATES: tuple[str, ...] = (
    # Does the benchmark's conclusion hold? (hvstats.systems, issue 36); before "%(name)s: %(label)s"
    gettext_noop("%(head)s: the judge-only ranking falls outside the PPI++ rank-sets: %(systems)s."),
    gettext_noop("%(head)s: the judge-only ranking lies within the PPI++ rank-sets."),
    gettext_noop("Does the benchmark's conclusion hold? Scores per %(system)s"),
    gettext_noop("%(judge)s: the judge-only ranking lies within the prediction-powered rank-sets"),
    gettext_noop("%(judge)s: the judge-only ranking falls outside the prediction-powered rank-sets: %(systems)s"),
    gettext_noop(
        "%(judge)s: units (item and pair): %(both)d compared by people and the judge, %(judge_only)d by the "
        "judge only, %(people_only)d by people only (human-only ranking alone)"
    ),
    gettext_noop(
        "Win rate of each system (wins over the comparisons it took part in; a tie is no win) and its rank-set at "
        "alpha %(alpha)s (1 = most wins; Chatzi et al. 2024, Algorithm 2), from people's comparisons only, the "
        "judge's only, and the judge's on every item plus people's on the items they compared (prediction-powered, "
        "tuned lambda). The covariance divides each system's residuals by its own comparison count "
        "(docs/ranking.md)."
    ),
    gettext_noop("Every pair of %(system)s values: A - B"),
    gettext_noop("System-level agreement: the judge's %(system)s scores vs people's"),
    gettext_noop("%(a)s scores higher than %(b)s"),
    gettext_noop("cannot tell %(a)s from %(b)s"),
    gettext_noop("field '%(field)s' is nominal with %(n)d labels: scores need numbers or two labels"),
    gettext_noop("'%(column)s' has no value %(values)s; its values: %(known)s"),
    gettext_noop(
        "Mean score per %(system)s from people only, the judge only, and the judge on all items plus people on "
        "the sample (PPI++, Angelopoulos, Duchi and Zrnic 2023), with simultaneous %(level)s intervals across "
        "the %(k)d systems (Bonferroni: each at 1 - alpha/k). Rank-sets (1 = highest) at alpha %(alpha)s "
        "(Chatzi et al. 2024, Algorithm 2); the judge-only rank is the judge's own rank of each system."
    ),
    gettext_noop(
        "Difference of the PPI++ means with a %(level)s interval, Bonferroni-corrected over the %(pairs)d pairs "
        "of one field and judge; the conclusion is 'cannot tell' when the interval holds 0. The judge-only "
        "conclusion holds when the judge alone says the same."
    ),
    gettext_noop(
        "Rank correlation of the judge-only and human-only means over the %(system)s values (n = systems), with "
        "a %(level)s percentile interval from %(resamples)d item resamples within each system; the last column "
        "names the pairs the judge orders the other way round from people."
    ),
    gettext_noop(
        "Difference of the two groups' means with a %(level)s interval (one comparison each, no correction); the "
        "judge-only conclusion holds when its interval gives the same sentence as PPI++."
    ),
    gettext_noop("%(judge)s vs mean human: Pearson r"),
    gettext_noop("%(judge)s vs human"),
    gettext_noop("%(judge)s vs mean human: Spearman ρ"),
    gettext_noop("%(caption)s Resampled within generation backbone."),
    gettext_noop(
        "As Table 4, with the mean human and the human agreement computed within each annotator group "
        "only (%(groups)s)."
    ),
    gettext_noop("Agreement with %(judge)s on its positive values"),
    gettext_noop("%(judge)s: mean story score"),
    gettext_noop("%(scale)s mean"),
    gettext_noop("%(scale)s SD"),
    gettext_noop("%(metric)s All"),
    gettext_noop(
        "Alt-test at epsilon %(epsilon)s (Calderon, Reichart and Dror 2025): the judge passes when it is as "
        "good as or better than at least half of the humans (winning rate ω ≥ 0.5; Benjamini-Yekutieli at "
        "q = 0.05); ρ = share of items where it scores at least as well as the held-out human "
        "(accuracy for categorical fields, negative RMSE otherwise). The alt-test uses the items with at "
        "least two human ratings and a judge rating; humans with fewer than 30 such items are not tested "
        "(Humans tested). PPI mean (PPI++, power-tuned λ, 95%% CI): the field's mean over every item the "
        "judge rated, the human-rated ones labelled by the mean of their human ratings (Human-rated items) "
        "and the judge-only ones by the judge (Judge-only items); the human-only mean beside it covers only "
        "the human-rated items the judge also rated (items no judge rated are in neither). Two-label fields "
        "count the second label as 1. A note in a verdict cell (no variation, one category only, too few "
        "humans, no overlap) says when the test cannot tell."
    ),
    gettext_noop("%(judge)s vs mean human: n"),
    gettext_noop(
        "Human agreement (both kinds) uses the annotators with at least %(n)d rated items in the field (the "
        "alt-test's minimum; report setting min_rater_items); no annotator was left out."
    ),
    gettext_noop(
        "Human agreement (both kinds) uses the annotators with at least %(n)d rated items in the field (the "
        "alt-test's minimum; report setting min_rater_items); left out, with their items: %(raters)s."
    ),
    gettext_noop(
        "Agreement between annotators uses the annotators with at least %(n)d judged units in the field "
        "(the alt-test's minimum; report setting min_rater_items); no annotator was left out."
    ),
    gettext_noop(
        "Agreement between annotators uses the annotators with at least %(n)d judged units in the field "
        "(the alt-test's minimum; report setting min_rater_items); left out: %(raters)s."
    ),
    gettext_noop("too few humans: %(n)d tested (the alt-test asks for at least %(min)d)"),
    gettext_noop("undefined: %(reason)s"),
    gettext_noop("no human with at least %(n)d items rated by another human and the judge"),
    gettext_noop("fewer than %(n)d items"),
    gettext_noop("fewer than %(n)d strata with a value"),
    gettext_noop("leave-one-out undefined for rater(s) %(raters)s"),
    gettext_noop("%(metric)s not applicable"),
    # hvstats.ppi / hvstats.active: the small-sample rule for lambda (issue 34)
    gettext_noop("lambda = 1: fewer than %(n)d labels"),
    gettext_noop("lambda = N/(n+N): fewer than %(n)d labels"),
    gettext_noop("no item where %(given)s is %(side)s"),
    # active samples
    gettext_noop("Active estimates: %(name)s (judge %(judge)s)"),
    gettext_noop("1 - confidence, from the judge's '%(metric)s' value"),
    gettext_noop("the judge's '%(metric)s' value as the uncertainty"),
    gettext_noop("disagreement across the judge's passes / members (%(field)s)"),
    # refusals of judges.uncertainty.item_uncertainty, shown on the active page
    gettext_noop("the judge's passes give no numeric answers to '%(field)s' on any item"),
    gettext_noop("the judge has no '%(metric)s' value on any item"),
    # the answers table (hvstats.verdicts.answers_table)
    gettext_noop(
        "Alternative annotator test (Calderon, Reichart and Dror 2025) at epsilon %(epsilon)s on all items of "
        "each field: passes, fails, or cannot tell (the note says why). Within a field, Benjamini-Yekutieli "
        "over the tested humans at q = 0.05; across fields no further correction: each field's verdict stands "
        "at its own level and the answer claims no family-wise guarantee. Stability: the share of "
        "leave-one-human-out replicates (each human removed in turn, the test rerun on the others; n = "
        "replicates) with the same answer; borderline when it is below 1 or a winning rate is exactly 0.5 "
        "(HV's own check, not part of the paper). Items: the most items any field's test used."
    ),
    gettext_noop("%(name)s: the answer changes without one of %(names)s."),
    gettext_noop("%(name)s: winning rate exactly 0.5 on %(fields)s."),
    # the notes of hvstats.notes under the paper tables and the verdicts table
    gettext_noop(
        "Small samples, fewer than %(n)d items (the interval is rough): %(count)d coefficients on %(least)d to "
        "%(most)d items, in the rows %(rows)s; columns %(columns)s."
    ),
    gettext_noop(
        "%(row)s: a mean at %(percent)s of %(n)d items, with the exact binomial (Clopper-Pearson) 95%% interval."
    ),
    gettext_noop(
        "Zero-width intervals (every resample of the items gives the same value: degenerate, not precise): "
        "%(count)d cells, in the rows %(rows)s; columns %(columns)s."
    ),
    # last: "<name>: <label>" rows (a group, backbone, judge or country, then a known label)
    gettext_noop("%(name)s: %(label)s"),
    # the pairs a judge orders differently from people ("A / B; C / D"): names only, last of all
    gettext_noop("%(first)s / %(second)s"),
    # a pair of systems or groups ("gpt - gemini", "family + social - politics"): names only
    gettext_noop("%(a)s - %(b)s"),
)

RATERS_NOTE = re.compile(r"^(\d+) annotators?, (\d+) judges?\.$")
#: texts with a count, translated with ngettext (:func:`translate`)
LABELLED_NOTE = re.compile(r"^(\d+) labelled items? \(at least (\d+) needed\)$")
REFITTED_NOTE = re.compile(r"^refitted on (\d+) human labels?$")
_PLACEHOLDER = re.compile(r"%\((\w+)\)([sd])")


@lru_cache(maxsize=1)
def _compiled() -> tuple[frozenset[str], tuple[tuple[str, re.Pattern[str]], ...]]:
    compiled = []
    for t in TEMPLATES:
        parts, at = [], 0
        for m in _PLACEHOLDER.finditer(t):
            parts.append(re.escape(t[at : m.start()].replace("%%", "%")))
            parts.append(f"(?P<{m.group(1)}>\\d+)" if m.group(2) == "d" else f"(?P<{m.group(1)}>.+?)")
            at = m.end()
        parts.append(re.escape(t[at:].replace("%%", "%")))
        compiled.append((t, re.compile("^" + "".join(parts) + "$", re.S)))
    return frozenset(MESSAGES), tuple(compiled)


def _match(text: str) -> tuple[str, dict[str, str]] | None:
    for template, pattern in _compiled()[1]:
        if m := pattern.match(text):
            return template, m.groupdict()
    return None


#: a field id or a question label (``q3``, ``Q1``, ``flags:x``, ``q[*]``): notation, the same in every language
FIELD = re.compile(r"^(?:[A-Z]?\d+|[a-z_][\w:]*(?:\[[\w*]+\])?)$")


def is_known(text: str, data: frozenset[str] | set[str] = frozenset()) -> bool:
    """Whether the page shows ``text`` in the active language: a known text, a template whose
    worded parts are known, or ``data`` (names the researcher or the items chose: judges,
    raters, countries, generators) and field ids, which read the same in every language."""
    if not text or text in _compiled()[0] or text in data or FIELD.match(text):
        return True
    if RATERS_NOTE.match(text) or LABELLED_NOTE.match(text) or REFITTED_NOTE.match(text):
        return True
    if not re.search(r"[A-Za-z]{3}", text):  # a symbol or a number: λ, n
        return True
    found = _match(text)
    if found is None:
        return False
    template, parts = found
    if template == "%(name)s: %(label)s":
        return is_known(parts["label"], data) and (is_known(parts["name"], data))
    return all(is_known(parts[k], data) for k in ("caption", "reason") if k in parts)


def translate(text: str) -> str:
    """``text`` in the active language; a text the catalogues do not know (a judge's or a
    country's name) as it is."""
    if not text:
        return text
    if text in _compiled()[0]:
        return gettext(text)
    if m := RATERS_NOTE.match(text):
        humans, judges = int(m.group(1)), int(m.group(2))
        return gettext("%(annotators)s, %(judges)s.") % {
            "annotators": ngettext("%(n)d annotator", "%(n)d annotators", humans) % {"n": humans},
            "judges": ngettext("%(n)d judge", "%(n)d judges", judges) % {"n": judges},
        }
    if m := LABELLED_NOTE.match(text):
        n, least = int(m.group(1)), int(m.group(2))
        return ngettext(
            "%(n)d labelled item (at least %(least)d needed)", "%(n)d labelled items (at least %(least)d needed)", n
        ) % {"n": n, "least": least}
    if m := REFITTED_NOTE.match(text):
        n = int(m.group(1))
        return ngettext("refitted on %(n)d human label", "refitted on %(n)d human labels", n) % {"n": n}
    found = _match(text)
    if found is None:
        return text
    template, parts = found
    if template == "%(name)s: %(label)s" and parts["label"] not in _compiled()[0] and not _match(parts["label"]):
        return text
    values: dict[str, Any] = {
        # a number in the text (an epsilon, a share) as the page's language writes it
        k: (int(v) if v.isdigit() else localize_numbers(v) if NUMBER.fullmatch(v) else translate(v))
        for k, v in parts.items()
    }
    if isinstance(values.get("name"), str):  # a sample's name HV wrote itself ("... (round 1 of 2)")
        values["name"] = sample_name(values["name"])
    for k in ("rows", "columns"):
        # the small-sample note's lists of row and column labels: each label is a UI word
        # (a list's whole text can match a "name: label" template and come back half translated)
        if k in parts and parts[k] not in _compiled()[0]:
            values[k] = ", ".join(translate(label) for label in parts[k].split(", "))
    return gettext(template) % values


def translate_table(table: Mapping[str, Any]) -> dict[str, Any]:
    """A table's ``to_dict()`` with its words in the active language, and its numbers written
    the way that language writes them (``0,82 [0,75; 0,88]`` in German; the downloads keep the
    paper's English)."""
    rows = []
    for r in table.get("rows", []):
        cells = []
        for c in r["cells"]:
            c = dict(c)
            if c.get("format") == "text" and isinstance(c.get("display"), str):
                c["display"] = translate(c["display"])
            elif isinstance(c.get("display"), str):
                c["display"] = localize_numbers(c["display"])
            if c.get("note"):
                c["note"] = translate(c["note"])
            cells.append(c)
        rows.append({**r, "label": translate(r["label"]), "cells": cells})
    return {
        **table,
        "title": translate(table.get("title", "")),
        "caption": translate(table.get("caption", "")),
        "row_header": translate(table.get("row_header", "")),
        "columns": [translate(c) for c in table.get("columns", [])],
        "rows": rows,
        "notes": [translate(n) for n in table.get("notes", [])],
    }


def texts_of(table: Mapping[str, Any]) -> list[str]:
    """Every text of a table the page shows in words (for the completeness test)."""
    out = [table.get("title", ""), table.get("caption", ""), table.get("row_header", "")]
    out += list(table.get("columns", [])) + list(table.get("notes", []))
    for r in table.get("rows", []):
        out.append(r["label"])
        for c in r["cells"]:
            if c.get("format") == "text":
                out.append(c.get("display") or "")
            out.append(c.get("note") or "")
    return [t for t in out if t]
