"""REST API for judges (DRF). Projects a user does not manage answer 404 (not revealed)."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.shortcuts import get_object_or_404
from django.utils import translation
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.generics import ListAPIView
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import managed_project_or_403
from annotation.models import Project
from annotation.sources import registry
from core import reaper
from core.api import Pagination
from core.errors import DomainError
from core.schema import refusal

from . import bias, endpoints, imported, outputs, selectors
from .administration import (
    check_judge_short_label,
    check_prices,
    delete_judge,
    set_judge_hidden,
    set_judge_prices,
    set_judge_short_label,
)
from .configuration import create_judge_config
from .models import JudgeConfig, JudgeOutput, JudgeOutputImport, JudgeRun
from .runs import cancel_judge_run, rerun_failed_items, start_judge_run


def _project(request: Request, project_id: int) -> Project:
    return managed_project_or_403(request.user, project_id, hide=True)


def _run(request: Request, run_id: int) -> JudgeRun:
    run = selectors.managed_run(request.user, run_id)
    if run is None:
        raise NotFound("no such run")
    return run


class ProjectJudgeField(serializers.PrimaryKeyRelatedField):
    """An ensemble member: the id of a judge of the project in the serializer's context. Any
    other id, another project's or none, gets DRF's one "does not exist" answer, so the answer
    does not tell whether a judge id exists elsewhere (issue 37)."""

    def get_queryset(self):
        project = self.context.get("project")
        return JudgeConfig.objects.filter(project=project) if project is not None else JudgeConfig.objects.none()


class JudgeConfigSerializer(serializers.ModelSerializer):
    members = ProjectJudgeField(many=True, required=False, queryset=JudgeConfig.objects.all())
    rater = serializers.IntegerField(source="rater_id", read_only=True)
    prompt_template = serializers.JSONField(required=False)
    parser = serializers.CharField(required=False)
    questions = serializers.ListField(child=serializers.CharField(), required=False)
    short_label = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=32,
        help_text="what tables and pages call the judge, e.g. GPT-4o; blank or left out: derived from the name",
    )

    class Meta:
        model = JudgeConfig
        fields = [
            "id",
            "name",
            "short_label",
            "backend",
            "model_id",
            "prompt_template",
            "parser",
            "questions",
            "params",
            "passes",
            "both_orders",
            "combine",
            "members",
            "rater",
            "hidden",
            "price_prompt_per_1m",
            "price_completion_per_1m",
            "created_at",
        ]
        read_only_fields = ["id", "rater", "hidden", "created_at"]

    def to_representation(self, instance):
        data = super().to_representation(instance)
        # a literal key stored before they were refused is never echoed
        data["params"] = endpoints.public_params(data.get("params") or {})
        return data


class JudgeSettingsSerializer(serializers.Serializer):
    """What can change on a judge once made: hidden, and the prices per 1M tokens (both or
    neither; one given alone is paired with the other's current value)."""

    hidden = serializers.BooleanField(required=False)
    short_label = serializers.CharField(
        required=False, max_length=32, help_text="what tables and pages call the judge (unique in the project)"
    )
    price_prompt_per_1m = serializers.DecimalField(
        max_digits=12, decimal_places=6, min_value=0, allow_null=True, required=False
    )
    price_completion_per_1m = serializers.DecimalField(
        max_digits=12, decimal_places=6, min_value=0, allow_null=True, required=False
    )


class StartRunSerializer(serializers.Serializer):
    item_ids = serializers.ListField(child=serializers.IntegerField(), required=False)
    sample = serializers.IntegerField(required=False, min_value=1, help_text="a design sample of the project (id)")
    stratum = serializers.DictField(
        child=serializers.CharField(allow_blank=True, max_length=300),
        required=False,
        help_text='item strata or meta keys and their values, e.g. {"country": "China"}',
    )
    sample_size = serializers.IntegerField(required=False, min_value=1)
    seed = serializers.IntegerField(required=False)
    chunk_size = serializers.IntegerField(required=False, min_value=1)


class JudgeOutputSerializer(serializers.ModelSerializer):
    """``parsed``: the rubric answers; ``labels``: what the judge's classifiers answered outside
    the rubric (Table 3 classes, the refusal judge's refused / answered), or null."""

    external_id = serializers.CharField(source="item.external_id")
    member = serializers.CharField(source="member.name", default=None, allow_null=True)
    parsed = serializers.SerializerMethodField()
    labels = serializers.SerializerMethodField()

    class Meta:
        model = JudgeOutput
        fields = [
            "item",
            "external_id",
            "pass_index",
            "order",
            "member",
            "raw_output",
            "parsed",
            "labels",
            "error",
            "latency_ms",
            "prompt_tokens",
            "completion_tokens",
        ]

    @extend_schema_field(OpenApiTypes.ANY)
    def get_parsed(self, obj: JudgeOutput):
        return outputs.rubric_part(obj.parsed)

    @extend_schema_field({"type": "object", "additionalProperties": {"type": "string"}, "nullable": True})
    def get_labels(self, obj: JudgeOutput):
        return outputs.output_labels(obj.parsed)


class MetricSerializer(serializers.Serializer):
    """One statistic (``hvstats.MetricResult``): ``value`` null when undefined (``reason``
    says why), ``ci`` a 95% interval [low, high] or null."""

    metric = serializers.CharField()
    value = serializers.FloatField(allow_null=True)
    ci = serializers.ListField(child=serializers.FloatField(), allow_null=True)
    p_value = serializers.FloatField(allow_null=True)
    n_items = serializers.IntegerField()
    reason = serializers.CharField(allow_null=True)


class ConsistencySerializer(MetricSerializer):
    consistent = serializers.IntegerField(required=False, help_text="items with the same verdict in both orders")
    first_both = serializers.IntegerField(required=False, help_text="items where the first-shown won in both orders")
    second_both = serializers.IntegerField(required=False, help_text="items where the second-shown won in both")
    other_inconsistent = serializers.IntegerField(required=False, help_text="inconsistent with a tie in one order")
    n_missing = serializers.IntegerField(help_text="items without a verdict in both orders (left out)")


class FirstPositionSerializer(MetricSerializer):
    n_first = serializers.IntegerField()
    n_second = serializers.IntegerField()
    n_ties = serializers.IntegerField()
    n_judgements = serializers.IntegerField()
    n_missing = serializers.IntegerField()


class PositionChecksSerializer(serializers.Serializer):
    verdict = serializers.ListField(child=serializers.CharField(), help_text="the question(s) the verdict reads")
    consistency = ConsistencySerializer(help_text="share of items with the same verdict in both orders")
    first_position_rate = FirstPositionSerializer(
        help_text="share of decisive judgements choosing the first-shown member (binomial test vs 0.5)"
    )


class StabilitySerializer(serializers.Serializer):
    question = serializers.CharField()
    level = serializers.CharField()
    percent_agreement = MetricSerializer()
    krippendorff_alpha = MetricSerializer()


class VerbosityQuestionSerializer(serializers.Serializer):
    question = serializers.CharField()
    judge = MetricSerializer(help_text="Spearman rho of the judge's rating vs length")
    humans = MetricSerializer(help_text="Spearman rho of the humans' mean answer vs length, same items")
    difference = MetricSerializer(help_text="judge minus humans")
    n_items = serializers.IntegerField()


class VerbositySerializer(serializers.Serializer):
    length = serializers.CharField()
    questions = VerbosityQuestionSerializer(many=True)


class LongerChoiceSerializer(MetricSerializer):
    n_longer = serializers.IntegerField(help_text="decisive choices of the longer text")
    n_shorter = serializers.IntegerField(help_text="decisive choices of the shorter text")
    n_left_out = serializers.IntegerField(help_text="ties, missing answers and pairs of equal length")


class LengthChoiceQuestionSerializer(serializers.Serializer):
    question = serializers.CharField()
    pair = serializers.ListField(child=serializers.CharField(), help_text="the two text fields compared")
    judge = LongerChoiceSerializer(help_text="share of the judge's decisive choices that picked the longer text")
    humans = LongerChoiceSerializer(help_text="the same share of the humans' answers on the same items")


class LengthChoiceSerializer(serializers.Serializer):
    length = serializers.CharField()
    questions = LengthChoiceQuestionSerializer(many=True)


class BiasChecksSerializer(serializers.Serializer):
    """The run's bias checks (``judges/bias.py``); a check that does not apply is null."""

    both_orders = serializers.BooleanField()
    passes = serializers.IntegerField()
    position = PositionChecksSerializer(allow_null=True)
    stability = StabilitySerializer(many=True, allow_null=True)
    verbosity = VerbositySerializer(allow_null=True)
    length_choice = LengthChoiceSerializer(allow_null=True, help_text="pairwise questions over two texts")


class RunUsageSerializer(serializers.Serializer):
    """Tokens of the run and its estimated cost from the judge's prices per 1M tokens (read now)."""

    outputs = serializers.IntegerField()
    counted = serializers.IntegerField(help_text="outputs with token counts")
    prompt_tokens = serializers.IntegerField(allow_null=True)
    completion_tokens = serializers.IntegerField(allow_null=True)
    cost = serializers.DecimalField(max_digits=24, decimal_places=6, allow_null=True)
    cost_note = serializers.CharField(allow_blank=True, help_text="why there is no cost, or what it leaves out")


class JudgeRunSerializer(serializers.Serializer):
    """A run's progress (and, on the run's own endpoint, its bias checks)."""

    id = serializers.IntegerField()
    status = serializers.CharField()
    total = serializers.IntegerField()
    done = serializers.IntegerField()
    failed = serializers.IntegerField()
    remaining = serializers.IntegerField()
    percent = serializers.IntegerField()
    items_per_s = serializers.FloatField(allow_null=True)
    eta_s = serializers.FloatField(allow_null=True)
    elapsed_s = serializers.FloatField()
    message = serializers.CharField(allow_blank=True)
    queue = serializers.CharField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    config = serializers.IntegerField()
    parent = serializers.IntegerField(allow_null=True)
    labels = serializers.DictField(child=serializers.DictField(child=serializers.IntegerField()))
    sample = serializers.IntegerField(allow_null=True, help_text="the design sample the run was limited to")
    stratum = serializers.DictField(child=serializers.CharField(allow_blank=True))
    scope = serializers.CharField(allow_blank=True, help_text="what the run covers, in words")
    usage = RunUsageSerializer()


class JudgeRunDetailSerializer(JudgeRunSerializer):
    bias = BiasChecksSerializer()


def _progress(run: JudgeRun) -> dict:
    data = selectors.run_progress(run)
    with translation.override("en"):  # the API's words are English, as its other messages
        usage = selectors.run_usage(run)
    data.update(
        {
            "config": run.config_id,
            "parent": run.parent_id,
            "labels": selectors.run_label_counts(run),
            "sample": run.sample_id,
            "stratum": run.stratum or {},
            "scope": run.scope,
            "usage": usage,
        }
    )
    return data


class JudgeConfigList(APIView):
    @extend_schema(responses=JudgeConfigSerializer(many=True))
    def get(self, request: Request, project_id: int) -> Response:
        project = _project(request, project_id)
        return Response(JudgeConfigSerializer(selectors.judge_configs(project), many=True).data)

    @extend_schema(request=JudgeConfigSerializer, responses={201: JudgeConfigSerializer})
    def post(self, request: Request, project_id: int) -> Response:
        project = _project(request, project_id)
        ser = JudgeConfigSerializer(data=request.data, context={"project": project})
        ser.is_valid(raise_exception=True)
        d = ser.validated_data
        config = create_judge_config(
            project=project,
            name=d["name"],
            backend=d["backend"],
            model_id=d.get("model_id", ""),
            prompt_template=d.get("prompt_template"),
            parser=d.get("parser"),
            questions=d.get("questions"),
            params=d.get("params") or {},
            passes=d.get("passes", 1),
            combine=d.get("combine", "mean"),
            members=d.get("members", []),
            both_orders=d.get("both_orders", False),
            created_by=request.user,
            price_prompt_per_1m=d.get("price_prompt_per_1m"),
            price_completion_per_1m=d.get("price_completion_per_1m"),
            short_label=d.get("short_label"),
        )
        return Response(JudgeConfigSerializer(config).data, status=status.HTTP_201_CREATED)


class JudgeConfigDetail(APIView):
    def _config(self, request: Request, project_id: int, config_id: int) -> JudgeConfig:
        project = _project(request, project_id)
        return get_object_or_404(JudgeConfig.objects.select_related("rater"), pk=config_id, project=project)

    @extend_schema(responses=JudgeConfigSerializer)
    def get(self, request: Request, project_id: int, config_id: int) -> Response:
        return Response(JudgeConfigSerializer(self._config(request, project_id, config_id)).data)

    @extend_schema(request=JudgeSettingsSerializer, responses=JudgeConfigSerializer)
    def patch(self, request: Request, project_id: int, config_id: int) -> Response:
        """Hide or show the judge (a hidden judge is left out of reports, curation and exports),
        set its prices per 1M tokens and its short label; all or nothing."""
        config = self._config(request, project_id, config_id)
        ser = JudgeSettingsSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        d = ser.validated_data
        prompt = d.get("price_prompt_per_1m", config.price_prompt_per_1m)
        completion = d.get("price_completion_per_1m", config.price_completion_per_1m)
        check_prices(prompt, completion)  # refused before anything changes
        if "short_label" in d:
            check_judge_short_label(config=config, label=d["short_label"])
        with transaction.atomic():
            if "short_label" in d:
                set_judge_short_label(config=config, label=d["short_label"])
            if "price_prompt_per_1m" in d or "price_completion_per_1m" in d:
                set_judge_prices(config=config, prompt=prompt, completion=completion)
            if "hidden" in d:
                set_judge_hidden(config=config, hidden=d["hidden"])
        return Response(JudgeConfigSerializer(config).data)

    @extend_schema(
        request=None,
        responses={204: None, 409: refusal("A run of the judge is pending, or an ensemble uses it; nothing deleted.")},
    )
    def delete(self, request: Request, project_id: int, config_id: int) -> Response:
        """Delete the judge with its runs, outputs, ratings and rater (409 while a run of it is
        pending or an ensemble uses it); 204, no body, as the schema says (issue 37)."""
        config = self._config(request, project_id, config_id)
        delete_judge(config=config)
        return Response(status=status.HTTP_204_NO_CONTENT)


class JudgeRunStart(APIView):
    @extend_schema(responses=JudgeRunSerializer(many=True))
    def get(self, request: Request, project_id: int, config_id: int) -> Response:
        """The config's latest 100 runs, newest first, with their progress."""
        project = _project(request, project_id)
        config = get_object_or_404(JudgeConfig, pk=config_id, project=project)
        runs = [_progress(r) for r in config.runs.order_by("-created_at")[:100]]
        return Response(JudgeRunSerializer(runs, many=True).data)

    @extend_schema(request=StartRunSerializer, responses={201: JudgeRunSerializer})
    def post(self, request: Request, project_id: int, config_id: int) -> Response:
        """Start a run on a worker over the project's items, or ``item_ids``, or those of a design
        ``sample`` and / or a ``stratum``; ``sample_size`` then draws a random subset."""
        project = _project(request, project_id)
        config = get_object_or_404(JudgeConfig, pk=config_id, project=project)
        ser = StartRunSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        d = dict(ser.validated_data)
        run = start_judge_run(config=config, user=request.user, sample_id=d.pop("sample", None), **d)
        return Response(JudgeRunSerializer(_progress(run)).data, status=status.HTTP_201_CREATED)


class JudgeRunDetail(APIView):
    @extend_schema(responses=JudgeRunDetailSerializer)
    def get(self, request: Request, run_id: int) -> Response:
        """The run's progress and its bias checks (computed from the outputs stored so far)."""
        run = _run(request, run_id)
        data = {**_progress(run), "bias": bias.run_bias_checks(run)}
        return Response(JudgeRunDetailSerializer(data).data)


class JudgeRunCancel(APIView):
    @extend_schema(request=None, responses=JudgeRunSerializer)
    def post(self, request: Request, run_id: int) -> Response:
        """Cancel a pending run; what was done stays."""
        run = _run(request, run_id)
        run = cancel_judge_run(run=run)
        return Response(JudgeRunSerializer(_progress(run)).data)


class JudgeRunRerunFailed(APIView):
    @extend_schema(request=None, responses={201: JudgeRunSerializer})
    def post(self, request: Request, run_id: int) -> Response:
        """A new run (child of this one) over the items that failed or never ran."""
        run = _run(request, run_id)
        new = rerun_failed_items(run=run, user=request.user)
        return Response(JudgeRunSerializer(_progress(new)).data, status=status.HTTP_201_CREATED)


class JudgeRunOutputs(ListAPIView):
    """The run's outputs, paginated (``failures=1``: only the failed ones)."""

    serializer_class = JudgeOutputSerializer
    pagination_class = Pagination

    @extend_schema(parameters=[OpenApiParameter("failures", str, enum=["0", "1"], description="1: failures only")])
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        run = _run(self.request, self.kwargs["run_id"])
        return selectors.run_outputs(run, errors_only=self.request.query_params.get("failures") == "1")


class FailedOutputSerializer(serializers.Serializer):
    pass_index = serializers.IntegerField()
    order = serializers.CharField()
    member = serializers.CharField(source="member.name", default=None, allow_null=True)
    raw_output = serializers.CharField(allow_blank=True, help_text="what the model said")
    error = serializers.CharField(allow_blank=True)


class JudgeFailureSerializer(serializers.Serializer):
    """A failed item: why, and every output of it in this run with the raw text."""

    item = serializers.IntegerField(source="item_id")
    external_id = serializers.CharField(source="item.external_id")
    error = serializers.CharField(allow_blank=True)
    outputs = FailedOutputSerializer(many=True, source="item.item_outputs")


class JudgeRunFailures(ListAPIView):
    """The run's failed items with the raw outputs they failed on (parse failures included)."""

    serializer_class = JudgeFailureSerializer
    pagination_class = Pagination

    def get_queryset(self):
        return selectors.run_failures(_run(self.request, self.kwargs["run_id"]))


class JudgeImportSerializer(serializers.Serializer):
    file = serializers.FileField()
    name = serializers.CharField(max_length=150)
    model_id = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    method = serializers.CharField(required=False, allow_blank=True, default="")
    metrics = serializers.CharField(required=False, allow_blank=True, default="", help_text="comma-separated")
    format = serializers.ChoiceField(choices=[], required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # the file types of the reader registry's judge-output readers, as registered now
        # a file type (jsonl, csv: the outputs readers) or a model reader's key (judge-pairs-csv)
        self.fields["format"].choices = [*registry.by_suffix(registry.MODEL), *registry.keys(registry.MODEL)]


class JudgeImportReportSerializer(serializers.Serializer):
    """What an import wrote (``ok``), or the problems by line with nothing written; with the job
    that ran it (``job``, ``status``, ``percent``): queued or running (202) for a file above
    ``HV_INLINE_IMPORT_BYTES``, to be read again at ``api/projects/<id>/judges/import/<job>/``."""

    ok = serializers.BooleanField()
    rater = serializers.IntegerField(allow_null=True)
    name = serializers.CharField(allow_blank=True)
    items = serializers.IntegerField()
    lines_read = serializers.IntegerField()
    questions = serializers.ListField(child=serializers.CharField())
    metrics = serializers.ListField(child=serializers.CharField())
    duplicate_of = serializers.IntegerField(
        allow_null=True, help_text="the import that wrote this file into the project already (nothing written)"
    )
    errors = serializers.ListField(child=serializers.CharField())
    errors_truncated = serializers.IntegerField()
    job = serializers.IntegerField(allow_null=True, help_text="the import job (null: refused before one was made)")
    status = serializers.CharField(help_text="queued, running, done or failed")
    percent = serializers.IntegerField(help_text="how far the import is, 0-100")


def _job_report(job: JudgeOutputImport) -> dict[str, Any]:
    return {**imported.JudgeImportReport.of(job).as_dict(), "job": job.id, "status": job.status, "percent": job.percent}


def _import_refused(errors: list[str]) -> Response:
    """A 400 for a request refused before reading the file: the import report with nothing
    written and the reasons."""
    report = {
        **imported.JudgeImportReport(ok=False, errors=errors).as_dict(),
        "job": None,
        "status": JudgeOutputImport.Status.FAILED,
        "percent": 100,
    }
    return Response(JudgeImportReportSerializer(report).data, status=status.HTTP_400_BAD_REQUEST)


#: the answer's status code by the job's status (a pending job: 202, read it again)
_IMPORT_CODES = {JudgeOutputImport.Status.DONE: status.HTTP_201_CREATED, JudgeOutputImport.Status.FAILED: 400}


class JudgeImport(APIView):
    """Import a judge's (or metric's) outputs as a model rater (multipart: ``file``, ``name``,
    ``model_id``, ``method``, ``metrics``). 201 with the report, 400 with the problems by line
    and nothing written, or 202 while a large file's job waits for a worker. Format:
    ``judges/imported.py``."""

    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request=JudgeImportSerializer,
        responses={
            201: JudgeImportReportSerializer,
            202: JudgeImportReportSerializer,
            400: JudgeImportReportSerializer,
        },
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = _project(request, project_id)
        ser = JudgeImportSerializer(data=request.data)
        if not ser.is_valid():  # answered in the report's shape, as the schema says
            return _import_refused([f"{field}: {m}" for field, msgs in ser.errors.items() for m in msgs])
        d = ser.validated_data
        try:
            job = imported.import_upload(
                project=project, upload=d["file"], fields=d, data_format=d.get("format"), user=request.user
            )
        except DomainError as exc:  # refused before anything was read: in the report's shape
            return _import_refused([exc.message])
        code = _IMPORT_CODES.get(job.status, status.HTTP_202_ACCEPTED)
        return Response(JudgeImportReportSerializer(_job_report(job)).data, status=code)


class JudgeImportDetail(APIView):
    """An import of judge outputs: its status, progress and report (the project's managers only)."""

    @extend_schema(responses={200: JudgeImportReportSerializer})
    def get(self, request: Request, project_id: int, job_id: int) -> Response:
        project = _project(request, project_id)
        job = get_object_or_404(JudgeOutputImport, pk=job_id, project=project)
        reaper.check(job)  # a job whose worker died is shown re-queued or failed, never running for ever
        return Response(JudgeImportReportSerializer(_job_report(job)).data)
