"""The human side's data: projects, rubric versions, items and their images, raters,
assignments and annotations (the tables study design keeps, samples, plans, pool slots and
crowd studies, are in ``studies.models``). Invariants live in database constraints; workflows live in the concept-named
service modules (``annotation.projects``, ``importing``, ``assigning``, ``annotating``) and in
``studies/``."""

from __future__ import annotations

import os

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from benchmarks.base import Preset
from benchmarks.registry import get_preset
from core.jobs import Job

from .rubric import Rubric
from .sources import registry as readers

_PARSED_RUBRICS: dict[tuple[int | None, str], Rubric] = {}


class RubricVersion(models.Model):
    """An immutable version of a rubric schema. Answers point at the version they were given under."""

    rubric_key = models.CharField(max_length=100)
    version = models.PositiveIntegerField()
    schema = models.JSONField()
    schema_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["rubric_key", "version"], name="uniq_rubric_version")]
        ordering = ["rubric_key", "-version"]

    def __str__(self) -> str:
        return f"{self.rubric_key} v{self.version}"

    def parsed(self) -> Rubric:
        """The parsed rubric, cached per process: a version's schema never changes (its hash
        is part of the key in case a row is edited by hand)."""
        key = (self.pk, self.schema_hash)
        cached = _PARSED_RUBRICS.get(key)
        if cached is None:
            cached = _PARSED_RUBRICS[key] = Rubric.from_schema(self.schema)
        return cached


class Project(models.Model):
    class Status(models.TextChoices):
        OPEN = "open", _("Open")
        CLOSED = "closed", _("Closed")

    name = models.CharField(max_length=200)
    preset_key = models.CharField(max_length=100)
    rubric_version = models.ForeignKey(RubricVersion, on_delete=models.PROTECT, related_name="projects")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    k_per_item = models.PositiveSmallIntegerField(default=3, help_text="annotators per item (k)")
    show_model_hints = models.BooleanField(default=False)
    randomise_pair_order = models.BooleanField(default=True)
    options = models.JSONField(default=dict, blank=True, help_text="further per-project settings")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(status__in=["open", "closed"]), name="project_status_valid"),
            models.CheckConstraint(condition=Q(k_per_item__gte=1), name="project_k_positive"),
        ]
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name

    @property
    def is_open(self) -> bool:
        return self.status == self.Status.OPEN

    @property
    def preset(self) -> Preset:
        return get_preset(self.preset_key)


class Membership(models.Model):
    class Role(models.TextChoices):
        RESEARCHER = "researcher", _("Researcher")
        ANNOTATOR = "annotator", _("Annotator")

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=20, choices=Role.choices)
    # Quality control may pause an annotator (no new items) until a researcher resumes them.
    paused_at = models.DateTimeField(null=True, blank=True)
    paused_reason = models.CharField(max_length=300, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "user", "role"], name="uniq_membership"),
            models.CheckConstraint(condition=Q(role__in=["researcher", "annotator"]), name="membership_role_valid"),
        ]


class Asset(models.Model):
    """An image stored once by content hash (sha256 of the bytes)."""

    sha256 = models.CharField(max_length=64, unique=True)
    format = models.CharField(max_length=10)
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    size_bytes = models.PositiveBigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.sha256[:12]}.{self.format.lower()}"

    @property
    def extension(self) -> str:
        return {"JPEG": "jpg"}.get(self.format, self.format.lower())

    def relative_path(self) -> str:
        return f"assets/{self.sha256[:2]}/{self.sha256}.{self.extension}"

    def thumbnail_path(self) -> str:
        return f"thumbs/{self.sha256[:2]}/{self.sha256}.webp"


class Item(models.Model):
    """One unit to judge. ``data`` holds the preset's fields (image fields hold asset hashes);
    the strata columns are real, indexed columns because sampling and reports filter on them."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="items")
    external_id = models.CharField(max_length=200)
    version = models.PositiveIntegerField(default=1)
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="revisions")
    data = models.JSONField()
    country = models.CharField(max_length=100, blank=True)
    region = models.CharField(max_length=100, blank=True)
    generator = models.CharField(max_length=100, blank=True)
    category = models.CharField(max_length=100, blank=True)
    dimension = models.CharField(max_length=100, blank=True)
    meta = models.JSONField(default=dict, blank=True)
    # image field -> the file name it was imported under (the path the data file gave): ``data``
    # holds the content hash, which is how images are stored; exports name the files by this.
    # Nullable, so rows written without it (older imports, raw inserts) read as "no names".
    image_names = models.JSONField(null=True, blank=True)
    assets = models.ManyToManyField(Asset, related_name="items", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "external_id", "version"], name="uniq_item_version"),
        ]
        # Strata are always filtered within a project (sampling, reports, breakdowns).
        indexes = [
            models.Index(fields=["project", "country", "generator"], name="item_strata_idx"),
            models.Index(fields=["project", "region", "category", "dimension"], name="item_strata2_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.external_id} v{self.version}"


#: ``Rater.backend`` of a human rater imported with a study run in another tool (no account)
IMPORTED_BACKEND = "imported"


class Rater(models.Model):
    """Whoever gives a judgement: a human user or a model. Judges are raters too, so every
    statistic and export treats them alike."""

    class Kind(models.TextChoices):
        HUMAN = "human", "Human"
        MODEL = "model", "Model"

    kind = models.CharField(max_length=10, choices=Kind.choices)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="rater"
    )
    name = models.CharField(max_length=200)
    # Profile attributes matched against item metadata (e.g. nationality) by assignment rules.
    attributes = models.JSONField(default=dict, blank=True)
    # Model raters: backend, model id, prompt hash, generation parameters.
    backend = models.CharField(max_length=50, blank=True)
    model_id = models.CharField(max_length=200, blank=True)
    prompt_hash = models.CharField(max_length=64, blank=True)
    parameters = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=["human", "model"]), name="rater_kind_valid"),
            # a person rates through their account, except an annotator of a study run elsewhere,
            # imported with their ratings (``annotation.annotation_import``): a pseudonymous
            # rater with no account, its source id kept in ``parameters`` (never shown)
            models.CheckConstraint(
                condition=Q(kind="model") | Q(user__isnull=False) | Q(backend=IMPORTED_BACKEND),
                name="human_rater_has_user",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"


class Assignment(models.Model):
    """An explicit (item, rater) row: who should judge what, in which presentation, and where
    that work stands. Strategies (all-annotators, stratified k-overlap, gold/attention, repeats)
    create these rows; nothing is handed out as "whatever is unlabelled next"."""

    class Status(models.TextChoices):
        # labels in the UI's language: the annotator's queue shows them
        ASSIGNED = "assigned", _("Assigned")
        IN_PROGRESS = "in_progress", _("In progress")
        SUBMITTED = "submitted", _("Submitted")
        SKIPPED = "skipped", _("Skipped")
        EXPIRED = "expired", _("Expired")

    class Purpose(models.TextChoices):
        REGULAR = "regular", "Regular"
        ATTENTION = "attention", "Attention check"
        GOLD = "gold", "Gold"
        REPEAT = "repeat", "Repeat"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="assignments")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments")
    rater = models.ForeignKey(Rater, on_delete=models.CASCADE, related_name="assignments")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.ASSIGNED)
    purpose = models.CharField(max_length=10, choices=Purpose.choices, default=Purpose.REGULAR)
    position = models.PositiveIntegerField(default=0, help_text="order in the rater's queue")
    presentation = models.JSONField(default=dict, blank=True, help_text="e.g. which field is shown left")
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    skip_reason = models.TextField(blank=True)
    # The plan that created this row (stratified k-overlap design); null for the default strategy.
    # A key to a table of the room above (``studies.AssignmentPlan``), by name: annotation
    # never imports studies; the study design writes this column.
    plan = models.ForeignKey(
        "studies.AssignmentPlan", null=True, blank=True, on_delete=models.SET_NULL, related_name="assignments"
    )
    # Attention and gold items are scored at submit time against their known answers.
    qc_passed = models.BooleanField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    opened_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["item", "rater"], condition=Q(purpose="regular"), name="uniq_regular_assignment"
            ),
            models.CheckConstraint(
                condition=Q(status__in=["assigned", "in_progress", "submitted", "skipped", "expired"]),
                name="assignment_status_valid",
            ),
        ]
        indexes = [
            models.Index(fields=["rater", "project", "status", "position"], name="assignment_queue_idx"),
            models.Index(fields=["item", "status"], name="assignment_item_status_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.item} -> {self.rater} [{self.status}]"


#: The order of an annotator's queue, defined once: the statuses that are still to do, the one
#: already opened first (``in_progress``, then ``assigned``), and within a status the stored
#: position, ties by id. The ORM reads (``annotation.selectors``) and the lean path's statements
#: (``annotation.hotpath``) are both built from these; the index ``assignment_queue_idx`` on
#: (rater, project, status, position) serves them.
QUEUE_STATUSES = (Assignment.Status.IN_PROGRESS, Assignment.Status.ASSIGNED)
QUEUE_ORDER = ("position", "id")

#: Whose assignment a person opens and answers, defined once: their own rater of this kind (a
#: model rater's assignments hold a judge's ratings). ``selectors.my_assignment`` filters on it
#: and the lean statements (``annotation.hotpath``) restate it in SQL.
ANNOTATOR_KIND = Rater.Kind.HUMAN
#: Opening an item, defined once: an assignment in ``OPENS_FROM`` becomes ``OPENS_TO`` and its
#: time on task starts (``opened_at``); ``annotate.annotating.open_assignment`` and the lean
#: statement that opens (``annotation.hotpath``) both apply it.
OPENS_FROM, OPENS_TO = Assignment.Status.ASSIGNED, Assignment.Status.IN_PROGRESS


class Annotation(models.Model):
    """The answers of one assignment, stored against the rubric version they were given under."""

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="annotation")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="annotations")
    rater = models.ForeignKey(Rater, on_delete=models.CASCADE, related_name="annotations")
    rubric_version = models.ForeignKey(RubricVersion, on_delete=models.PROTECT, related_name="annotations")
    answers = models.JSONField()
    derived = models.JSONField(default=dict)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    revision = models.PositiveIntegerField(default=1, help_text="incremented each time the rater edits")
    # The wording the rubric was shown in when answered (last edit): "en" the paper's canonical
    # wording, else one of the rubric's translations; "" when not known (stored before, or an
    # API client that did not say).
    locale = models.CharField(max_length=20, blank=True, default="")
    # The import that brought this answer from a study run in another tool (Label Studio, a
    # survey's CSV); null for answers given in HV. The exports mark such rows ``imported:<id>``.
    source_import = models.ForeignKey(
        "AnnotationImport", null=True, blank=True, on_delete=models.SET_NULL, related_name="annotations"
    )

    class Meta:
        indexes = [models.Index(fields=["item", "rater"], name="annotation_item_rater_idx")]


class AnnotationRevision(models.Model):
    """An answer an edit replaced: the annotation as it stood before the edit (answers, derived
    fields, rubric version, revision number and time on task), kept so an edited rating's history
    is never lost. Written in the edit's transaction (``annotation.history``); never changed."""

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="history")
    revision = models.PositiveIntegerField(help_text="the annotation's revision number these answers had")
    answers = models.JSONField()
    derived = models.JSONField(default=dict)
    rubric_version = models.ForeignKey(RubricVersion, on_delete=models.PROTECT, related_name="+")
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    answered_at = models.DateTimeField(help_text="when these answers were given")
    edited_at = models.DateTimeField(help_text="when an edit replaced them")
    edited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["annotation", "revision"], name="uniq_annotation_revision"),
        ]
        ordering = ["annotation_id", "revision"]

    def __str__(self) -> str:
        return f"annotation {self.annotation_id} r{self.revision}"


class StagedImportJob(Job):
    """The columns and lifecycle every import of an uploaded file shares (the skeleton is
    ``annotation.staging``): who started it, the staged file it reads (``data_file``, or a path
    given on the command line), the name it was uploaded under, and its report, which holds the
    progress while it runs (``staging.progress_report``), then the outcome. Subclasses add what
    the import is about; their app's ``tasks`` module sends them (``core.jobs.register_sender``)."""

    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    data_file = models.CharField(max_length=500)
    original_name = models.CharField(max_length=255, blank=True)
    report = models.JSONField(default=dict, blank=True)

    #: the report's count of rows written, 0 in a failure's report
    written_key = "created"

    class Meta:
        abstract = True
        ordering = ["-created_at"]

    def failure_fields(self, message: str) -> dict:
        # an import's outcome is its report: a refused import lists why there
        return {"report": {"ok": False, "errors": [message], self.written_key: 0}}

    def running_fields(self) -> dict:
        # while it runs, the report holds its progress; a restarted import starts from nothing again
        return {"report": {"progress": 0.0, "phase": "checking"}}

    @property
    def percent(self) -> int:
        """How far the import is, 0-100: 100 once it ended, else what its report says so far."""
        if not self.is_pending:
            return 100
        try:
            return round(100 * min(max(float((self.report or {}).get("progress", 0.0)), 0.0), 1.0))
        except (TypeError, ValueError):
            return 0

    def staged_paths(self) -> list[str]:
        """The files a run reads."""
        return [self.data_file]

    def resume_blocker(self) -> str | None:
        # the import writes its rows and "done" in one transaction (on SQLite in batches, whose
        # leftovers its next run deletes first: annotation_import.write_plan), so it runs again
        # from its staged upload, while that is still there
        for path in self.staged_paths():
            if path and not os.path.isfile(path):
                return "its uploaded file is gone: upload it again"
        return None


class ImportJob(StagedImportJob):
    """An import of items from a file (plus images), run by a worker; the report is kept."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="imports")
    data_format = models.CharField(max_length=10)
    images_path = models.CharField(max_length=500, blank=True)

    written_key = "items_created"

    class Meta(StagedImportJob.Meta):
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "done", "failed"]), name="import_status_valid"
            )
        ]

    def staged_paths(self) -> list[str]:
        return [self.data_file, self.images_path]


class AnnotationImport(StagedImportJob):
    """An import of human annotations collected in another tool (Label Studio JSON, long CSV /
    JSONL, wide CSV) onto a project's items (``annotation.annotation_import``). Its provenance
    is kept here: the file's SHA-256, its format, the item key and the mapping of source fields
    to rubric questions; ``report`` holds the progress while it runs, then the outcome.

    The formats are the reader registry's (``annotation.sources.registry``): the choices are
    read from it when asked (a callable) and a format is checked against it, never listed here
    or in a table constraint, so that a new reader is one module and one registry line."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="annotation_imports")
    data_format = models.CharField(max_length=20, choices=readers.choices, validators=[readers.known_format])
    item_key = models.CharField(max_length=200, default="id")
    #: explicit source field -> rubric question ("" = ignore the field), as given
    mapping = models.JSONField(default=dict, blank=True)
    sha256 = models.CharField(max_length=64, blank=True, db_index=True)
    #: the file's SHA-256 on the one import of the project that wrote it, NULL on every other
    #: (pending, failed, a duplicate). Set first thing in the writing transaction, so a second
    #: import of the same file that reaches its write meets the unique constraint below (on
    #: PostgreSQL it waits for the first writer's commit, then fails) and is turned into "already
    #: imported by import N" instead of writing the ratings again (issue 37, H1).
    written_sha256 = models.CharField(max_length=64, null=True, blank=True, editable=False)
    #: a preview, not an import: the check of a file above ``HV_INLINE_IMPORT_BYTES`` run on a
    #: worker (issue 37, M3), its report the preview the page shows. It writes nothing, claims no
    #: file, is never "already imported" and is left out of the project's imports
    preview = models.BooleanField(default=False)
    #: a preview whose staged upload outlives it: the page's, which Confirm then imports (an API
    #: preview's upload is dropped once it has ended, as an inline one is)
    keeps_upload = models.BooleanField(default=False)

    written_key = "annotations_created"

    class Meta(StagedImportJob.Meta):
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "done", "failed"]), name="annotation_import_status_valid"
            ),
            models.UniqueConstraint(
                fields=["project", "written_sha256"],
                condition=Q(written_sha256__isnull=False),
                name="annotation_import_file_written_once",
            ),
        ]

    def __str__(self) -> str:
        return f"annotation import {self.pk} ({self.data_format})"

    @property
    def source_label(self) -> str:
        """How the exports mark the answers this import brought: ``imported:<id>``."""
        return f"imported:{self.pk}"
