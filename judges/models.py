"""Model judges: a judge configuration (one model rater), its runs, and every raw answer.

A judge is a rater: the combined answer per item is stored as an ``Annotation`` by the
config's ``Rater(kind=model)`` (see ``judges/ratings.py``), so agreement and exports never
special-case judges. The rows here keep what the judge said (raw output per pass), what was
parsed from it, and why an item failed."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy

from annotation.models import Item, Project, Rater, StagedImportJob
from annotation.sources import registry as readers
from core.jobs import TERMINAL, Job

from .backends.base import KEY_LENGTH
from .outputs import output_labels, rubric_part


def backend_choices() -> list[tuple[str, str]]:
    """The backend registry's choices (``judges.registry.backend_choices``), read when Django asks
    for them: the registry imports every backend module, and with them numpy, which loading the
    models (every process does) must not (``tests/benchmarks/test_lazy_tables.py``)."""
    from .registry import backend_choices as registered

    return registered()


class JudgeConfig(models.Model):
    class Parser(models.TextChoices):
        JSON = "json", gettext_lazy("JSON answers per rubric")
        SCORE_IS = "score_is", gettext_lazy('"score is <num>"')
        CHOICE = "choice", gettext_lazy("A label from a closed list")
        NONE = "none", gettext_lazy("None (backend answers directly)")

    class Combine(models.TextChoices):
        MEAN = "mean", gettext_lazy("Mean")
        MAJORITY = "majority", gettext_lazy("Majority")

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="judge_configs")
    name = models.CharField(max_length=200)
    # what tables and pages call the judge (judges/labels.py): set by the researcher, by default
    # the model's part of the name ("GPT-4o"); unique within the project, checked where it is set
    short_label = models.CharField(max_length=32, blank=True, default="")
    # the registry's backends (``judges/registry.py``): a callable, so a backend added there needs
    # no migration; checked in ``clean`` and by ``configuration.create_judge_config``, not by a
    # database constraint, which would be a literal list to keep in step
    backend = models.CharField(max_length=KEY_LENGTH, choices=backend_choices)
    model_id = models.CharField(max_length=300, blank=True)
    # {"system": "...", "user": "..."} or {"per_question": {qid: {"system", "user"}}}
    prompt_template = models.JSONField(default=dict, blank=True)
    parser = models.CharField(max_length=10, choices=Parser.choices, default=Parser.JSON)
    questions = models.JSONField(default=list, blank=True, help_text="rubric question ids the judge answers")
    params = models.JSONField(default=dict, blank=True, help_text="generation parameters and backend options")
    passes = models.PositiveSmallIntegerField(default=1)
    # pairwise presets only (``Preset.pair_order``): every pass also asks the pair swapped
    both_orders = models.BooleanField(default=False, help_text="also judge each pair in the swapped order")
    combine = models.CharField(max_length=10, choices=Combine.choices, default=Combine.MEAN)
    members = models.ManyToManyField("self", symmetrical=False, blank=True, related_name="ensembles")
    rater = models.OneToOneField(Rater, on_delete=models.PROTECT, related_name="judge_config")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    # Hidden: its rater is left out of the agreement report, the validation tables, curation and
    # exports (``agreement.selectors.hidden_rater_ids``); everything is kept, so it can be shown again.
    hidden = models.BooleanField(default=False)
    # What the researcher pays per 1M tokens for this judge's model (their currency): the runs'
    # estimated cost is computed from the stored token counts when it is read, so a price set or
    # corrected after a run applies to it too. Both or neither (``administration.set_judge_prices``).
    price_prompt_per_1m = models.DecimalField(max_digits=12, decimal_places=6, null=True, blank=True)
    price_completion_per_1m = models.DecimalField(max_digits=12, decimal_places=6, null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="uniq_judge_name"),
            models.CheckConstraint(condition=Q(passes__gte=1, passes__lte=20), name="judge_passes_range"),
            models.CheckConstraint(condition=Q(combine__in=["mean", "majority"]), name="judge_combine_valid"),
            models.CheckConstraint(
                condition=Q(price_prompt_per_1m__isnull=True, price_completion_per_1m__isnull=True)
                | Q(price_prompt_per_1m__gte=0, price_completion_per_1m__gte=0),
                name="judge_prices_both_or_neither",
            ),
        ]
        ordering = ["project_id", "name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        super().clean()
        from .registry import get_backend  # lazily, as backend_choices

        try:
            get_backend(self.backend)
        except KeyError as exc:
            raise ValidationError({"backend": str(exc.args[0])}) from None


class JudgeRun(Job):
    """One run of a judge over items, in chunks on a worker; the common job lifecycle
    (``core.jobs``: queued -> running -> done / failed / cancelled). It is done when every item
    has a result (failed when none could be judged)."""

    TERMINAL = TERMINAL

    config = models.ForeignKey(JudgeConfig, on_delete=models.CASCADE, related_name="runs")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="judge_runs")
    item_ids = models.JSONField(default=list, help_text="the items of this run, in order")
    total = models.PositiveIntegerField(default=0)
    chunk_size = models.PositiveIntegerField(default=16)
    queue = models.CharField(max_length=20, default="default")
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="reruns")
    # What the run was limited to: a design sample and / or a stratum ({key: value} over item
    # strata or meta keys), and in words (kept when the sample is deleted later)
    sample = models.ForeignKey(
        "studies.Sample", null=True, blank=True, on_delete=models.SET_NULL, related_name="judge_runs"
    )
    stratum = models.JSONField(default=dict, blank=True)
    scope = models.CharField(max_length=500, blank=True)
    message = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    started_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "done", "failed", "cancelled"]),
                name="judge_run_status_valid",
            )
        ]

    def __str__(self) -> str:
        return f"run {self.pk} of {self.config} [{self.status}]"

    # A run is many chunk tasks, possibly on several workers at once: it stays running when its
    # workers are lost, and the reaper counts one more attempt and sends chunks for the items
    # without a result (outputs are unique per (run, item, pass, order): nothing is asked twice).
    def requeue_fields(self) -> dict:
        return {"attempts": models.F("attempts") + 1}


class JudgeOutputImport(StagedImportJob):
    """An import of a judge's (or metric's) outputs made elsewhere as one model rater
    (``judges.imported``): a staged-upload job on the skeleton every file import shares
    (``annotation.staging``: progress, start inline or on a worker, discard, reaping). Kept here:
    what the rater will be (``name``, ``model_id``, ``method``, ``metrics``), the reader
    (``data_format``, a model reader's key of ``annotation.sources.registry``), the file's
    SHA-256 and the rater it wrote; ``report`` holds the progress while it runs, then the outcome."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="judge_output_imports")
    data_format = models.CharField(max_length=20, choices=readers.choices, validators=[readers.known_format])
    name = models.CharField(max_length=150)
    model_id = models.CharField(max_length=200, blank=True)
    method = models.TextField(blank=True)
    #: the declared metric columns, as given
    metrics = models.JSONField(default=list, blank=True)
    sha256 = models.CharField(max_length=64, blank=True, db_index=True)
    #: the file's SHA-256 on the one import of the project that wrote it, NULL on every other
    #: (pending, failed, a duplicate): claimed first thing in the writing transaction, so of two
    #: imports of one file running at once (a double click, two API posts) one writes and the
    #: other meets the unique constraint below and ends as its duplicate, as annotation imports do
    written_sha256 = models.CharField(max_length=64, null=True, blank=True, editable=False)
    rater = models.ForeignKey(Rater, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    written_key = "items"

    class Meta(StagedImportJob.Meta):
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "done", "failed"]),
                name="judge_output_import_status_valid",
            ),
            models.UniqueConstraint(
                fields=["project", "written_sha256"],
                condition=Q(written_sha256__isnull=False),
                name="judge_output_import_file_written_once",
            ),
        ]

    def __str__(self) -> str:
        return f"judge output import {self.pk} ({self.name})"


class JudgeOutput(models.Model):
    """One judge answer: (run, item, pass, order) is unique, so a redelivered chunk never writes
    twice. ``pass_index`` enumerates member x pass for ensembles (``member`` says which judge).

    ``order``: ``original`` (the item as stored) or ``swapped`` (a pairwise item shown in the
    other order, ``JudgeConfig.both_orders``). A swapped output's ``parsed`` is mapped back to
    the item's own order (``judges/orders.py``), its ``raw_output`` is what the model said. The
    judge's rating (its annotation) combines the original-order passes only (with one pass: the
    first pass in the original order); swapped outputs feed the bias checks (``judges/bias.py``)."""

    class Order(models.TextChoices):
        ORIGINAL = "original", gettext_lazy("Original order")
        SWAPPED = "swapped", gettext_lazy("Swapped order")

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="outputs")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="judge_outputs")
    pass_index = models.PositiveSmallIntegerField()
    order = models.CharField(max_length=10, choices=Order.choices, default=Order.ORIGINAL)
    member = models.ForeignKey(JudgeConfig, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    raw_output = models.TextField(blank=True)
    parsed = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    # tokens this output took (every request of the pass), as the endpoint reported them or the
    # local tokenizer counted them; null when the backend has no tokens (embedding, SSIM) or the
    # endpoint did not say
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "item", "pass_index", "order"], name="uniq_judge_output_order"),
            models.CheckConstraint(condition=Q(order__in=["original", "swapped"]), name="judge_output_order_valid"),
        ]
        indexes = [models.Index(fields=["run", "item"], name="judge_output_run_item_idx")]
        ordering = ["item_id", "pass_index", "order"]

    @property
    def labels(self) -> dict | None:
        """Classifier labels outside the rubric (Table 3 classes, refused / answered)."""
        return output_labels(self.parsed)

    @property
    def rubric_answers(self):
        return rubric_part(self.parsed)


class JudgeItemResult(models.Model):
    """The outcome of one item in one run, written once: ``ok`` (combined answers stored as the
    judge rater's annotation) or ``failed`` (why, with the raw outputs kept in JudgeOutput)."""

    class Status(models.TextChoices):
        OK = "ok", gettext_lazy("OK")
        FAILED = "failed", gettext_lazy("Failed")

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="results")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="judge_results")
    status = models.CharField(max_length=10, choices=Status.choices)
    answers = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "item"], name="uniq_judge_item_result"),
            models.CheckConstraint(condition=Q(status__in=["ok", "failed"]), name="judge_result_status_valid"),
        ]
        indexes = [models.Index(fields=["run", "status"], name="judge_result_run_status_idx")]


class JudgeChunkSlot(models.Model):
    """One judge chunk at work on a worker: a project's share of the shared worker (issue 37, M4).

    A chunk takes a slot of its project before it works and gives it back when it ends
    (``judges/share.py``); while a project holds ``HV_JUDGE_PROJECT_SHARE`` slots, its next chunk
    is sent again after a countdown instead of holding a worker thread. A chunk's watch renews
    ``expires_at`` every second or so, so the slot of a killed worker lapses within seconds."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="judge_chunk_slots")
    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="chunk_slots")
    worker = models.CharField(max_length=200, blank=True)
    taken_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        indexes = [models.Index(fields=["project", "expires_at"])]

    def __str__(self) -> str:
        return f"slot {self.pk} of project {self.project_id} (run {self.run_id})"
