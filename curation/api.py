"""Curation over the REST API: policy (get / set / preview), applying it, decisions with manual
overrides and their history, re-importing revised items, exports (start, poll, download) and
the accepted items for a pipeline. Researchers and admins of the project only: an unknown
project or export is 404, someone else's project 403."""

from __future__ import annotations

from pathlib import Path

from django.http import FileResponse
from django.urls import reverse
from django.utils.functional import lazy
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.generics import ListAPIView
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import managed_project_or_403
from annotation.models import Item, Project
from annotation.selectors import managed_projects
from benchmarks.base import STRATA_KEYS
from core import reaper

from . import export_formats, selectors, services
from .exports import content_type, file_path, main_file
from .models import DecisionEvent, Export, ItemDecision
from .policy import AGGREGATION_HELP


def managed_project(request: Request, project_id: int) -> Project:
    return managed_project_or_403(request.user, project_id)


# ------------------------------------------------------------------------------ serializers
class PolicySerializer(serializers.Serializer):
    rule = serializers.CharField(required=False, help_text="expression per rater over answers and derived fields")
    aggregation = serializers.CharField(
        required=False,
        help_text="; ".join(f"{name}: {text}" for name, text in AGGREGATION_HELP.items()),
    )
    tie = serializers.CharField(required=False, help_text="majority ties: reject | pending")
    judge_screening = serializers.BooleanField(required=False)
    min_human_ratings = serializers.IntegerField(required=False)
    revise_if = serializers.CharField(required=False, allow_blank=True)
    element_filter = serializers.JSONField(
        required=False,
        help_text='optional per-element filter of a list field, e.g. {"over": "values", "keep_if": '
        '"reflection == 1 and consistency == 1", "aggregation": "majority", "tie": "drop"}; {} for none',
    )


class PreviewSerializer(serializers.Serializer):
    policy = serializers.DictField(required=False, help_text="a policy to try (default: the project's)")
    by = serializers.CharField(
        required=False, allow_blank=True, help_text="a strata column (country, ...) or an item meta key"
    )


class DecisionSerializer(serializers.ModelSerializer):
    item_id = serializers.IntegerField(source="item.id")
    external_id = serializers.CharField(source="item.external_id")
    version = serializers.IntegerField(source="item.version")
    decided_by = serializers.CharField(source="decided_by.username", default=None)

    class Meta:
        model = ItemDecision
        fields = [
            "item_id",
            "external_id",
            "version",
            "status",
            "reason",
            "source",
            "note",
            "details",
            "decided_by",
            "decided_at",
        ]


class EventSerializer(serializers.ModelSerializer):
    user = serializers.CharField(source="user.username", default=None)

    class Meta:
        model = DecisionEvent
        fields = ["status", "previous_status", "reason", "source", "note", "policy", "user", "created_at"]


class OverrideSerializer(serializers.Serializer):
    status = serializers.CharField()
    note = serializers.CharField(allow_blank=True)


class ExportRequestSerializer(serializers.Serializer):
    content = serializers.CharField(help_text="items | annotations | revisions")
    # the registry's keys, read when the schema is made (a registered format is listed)
    format = serializers.CharField(help_text=lazy(lambda: " | ".join(export_formats.keys()), str)())
    scope = serializers.CharField(required=False, default="accepted", help_text="accepted | all")


class ExportSerializer(serializers.ModelSerializer):
    download_url = serializers.SerializerMethodField()

    class Meta:
        model = Export
        fields = [
            "id",
            "project",
            "content",
            "format",
            "scope",
            "status",
            "progress",
            "message",
            "files",
            "provenance",
            "created_at",
            "finished_at",
            "download_url",
        ]

    def get_download_url(self, obj: Export) -> str | None:
        if obj.status != Export.Status.DONE:
            return None
        url = reverse("api_curation_export_download", args=[obj.id])
        request = self.context.get("request")
        return request.build_absolute_uri(url) if request else url


class RevisionUploadSerializer(serializers.Serializer):
    data = serializers.FileField(help_text="JSONL of revised items (ids of existing items)")
    images = serializers.FileField(required=False, help_text="zip of new images")


class AcceptedItemSerializer(serializers.ModelSerializer):
    class Meta:
        model = Item
        fields = [
            "id",
            "external_id",
            "version",
            "data",
            *STRATA_KEYS,  # the indexed strata columns, named once (benchmarks.base)
            "meta",
        ]


# ------------------------------------------------------------------------------ views
class PolicyView(APIView):
    @extend_schema(responses=PolicySerializer)
    def get(self, request: Request, project_id: int) -> Response:
        """The project's acceptance policy (the preset's default until one is saved)."""
        project = managed_project(request, project_id)
        return Response(services.current_policy(project))

    @extend_schema(request=PolicySerializer, responses=PolicySerializer)
    def put(self, request: Request, project_id: int) -> Response:
        """Set the policy; a rule naming a field the rubric lacks is a 400 with the field list."""
        project = managed_project(request, project_id)
        if not isinstance(request.data, dict):
            raise ValidationError({"detail": "send the policy as a JSON object"})
        policy = services.set_policy(project=project, raw=dict(request.data), user=request.user)
        return Response(policy.spec_dict())


class PreviewView(APIView):
    @extend_schema(request=PreviewSerializer, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request, project_id: int) -> Response:
        """Counts the policy would give (accepted / rejected / needs_revision / pending), by stratum."""
        project = managed_project(request, project_id)
        body = PreviewSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        result = services.preview_policy(
            project=project, raw=body.validated_data.get("policy"), by=body.validated_data.get("by") or None
        )
        return Response(result)


class ApplyView(APIView):
    @extend_schema(request=OpenApiTypes.OBJECT, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request, project_id: int) -> Response:
        """Decide every item under the saved policy (``override_manual``: also replace manual decisions)."""
        project = managed_project(request, project_id)
        override = request.data.get("override_manual", False) if isinstance(request.data, dict) else False
        report = services.apply_policy(
            project=project, user=request.user, override_manual=str(override).lower() in ("1", "true", "yes", "on")
        )
        return Response(report.as_dict())


class DecisionListView(ListAPIView):
    serializer_class = DecisionSerializer

    @extend_schema(parameters=[OpenApiParameter("status", str)])
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        project = managed_project(self.request, self.kwargs["project_id"])
        status_ = self.request.query_params.get("status")
        if status_ and status_ not in dict(ItemDecision._meta.get_field("status").choices):
            raise ValidationError({"detail": f"unknown status {status_!r}"})
        return selectors.decisions(project, status=status_)


def _item(project: Project, item_id: int) -> Item:
    item = Item.objects.filter(project=project, pk=item_id).first()
    if item is None:
        raise NotFound("no such item in this project")
    return item


class OverrideView(APIView):
    @extend_schema(request=OverrideSerializer, responses=DecisionSerializer)
    def post(self, request: Request, project_id: int, item_id: int) -> Response:
        """A manual decision with a note (audited); kept when the policy is applied again."""
        project = managed_project(request, project_id)
        item = _item(project, item_id)
        body = OverrideSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        d = services.override_decision(item=item, user=request.user, **body.validated_data)
        return Response(DecisionSerializer(d).data)


class HistoryView(APIView):
    @extend_schema(responses=EventSerializer(many=True))
    def get(self, request: Request, project_id: int, item_id: int) -> Response:
        project = managed_project(request, project_id)
        item = _item(project, item_id)
        events = DecisionEvent.objects.filter(item=item).select_related("user").order_by("created_at", "id")
        return Response(EventSerializer(events, many=True).data)


class RevisionImportView(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(request=RevisionUploadSerializer, responses={201: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT})
    def post(self, request: Request, project_id: int) -> Response:
        """Re-import revised items as new versions of existing ones (all or nothing)."""
        project = managed_project(request, project_id)
        body = RevisionUploadSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data, images = body.validated_data["data"], body.validated_data.get("images")
        report = services.import_revision_upload(
            project=project,
            data_stream=data.chunks(),
            images_name=images.name if images is not None else None,
            images_stream=images.chunks() if images is not None else None,
        )
        return Response(report.as_dict(), status=201 if report.ok else 400)


class ExportListView(APIView):
    @extend_schema(responses=ExportSerializer(many=True))
    def get(self, request: Request, project_id: int) -> Response:
        project = managed_project(request, project_id)
        qs = Export.objects.filter(project=project).order_by("-created_at")[:100]
        return Response(ExportSerializer(qs, many=True, context={"request": request}).data)

    @extend_schema(request=ExportRequestSerializer, responses={202: ExportSerializer})
    def post(self, request: Request, project_id: int) -> Response:
        """Start an export on a worker; poll ``/api/exports/{id}/`` for progress and the download link."""
        project = managed_project(request, project_id)
        body = ExportRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        export = services.start_export(project=project, user=request.user, **body.validated_data)
        return Response(ExportSerializer(export, context={"request": request}).data, status=status.HTTP_202_ACCEPTED)


def _managed_export(request: Request, export_id: int) -> Export:
    export = (
        Export.objects.filter(pk=export_id, project__in=managed_projects(request.user).values("pk"))
        .select_related("project")
        .first()
    )
    if export is None:
        raise NotFound("no such export")
    return reaper.check(export)  # a job whose worker died is shown re-queued or failed


class ExportDetailView(APIView):
    @extend_schema(responses=ExportSerializer)
    def get(self, request: Request, export_id: int) -> Response:
        return Response(ExportSerializer(_managed_export(request, export_id), context={"request": request}).data)


class ExportDownloadView(APIView):
    @extend_schema(responses={(200, "application/octet-stream"): OpenApiTypes.BINARY})
    def get(self, request: Request, export_id: int, name: str | None = None) -> FileResponse:
        """The export's main file (``dataset.zip`` for a datasets folder), or one listed file by name."""
        export = _managed_export(request, export_id)
        if export.status != Export.Status.DONE:
            raise ValidationError({"detail": f"the export is {export.status}, not done"})
        name = name or main_file(export)
        path = file_path(export, name) if name else None
        if path is None:
            raise NotFound("no such file in this export")
        return FileResponse(
            open(path, "rb"), as_attachment=True, filename=Path(name).name, content_type=content_type(export, name)
        )


class AcceptedItemsView(ListAPIView):
    """Accepted items, paginated (what a pipeline pulls without an export)."""

    serializer_class = AcceptedItemSerializer

    def get_queryset(self):
        project = managed_project(self.request, self.kwargs["project_id"])
        return selectors.exported_items(project, "accepted").order_by("id")
