"""REST API (DRF): projects, items, imports, my assignments, submitting answers. The same
services and the same rubric validator as the web pages; domain refusals become answers in
``core.api.exception_handler``."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from benchmarks.base import STRATA_KEYS
from benchmarks.registry import PRESETS

from . import annotation_import, importing, projects, selectors
from .access import managed_visible_project
from .models import AnnotationImport, ImportJob, Item, Project
from .sources import registry


# ------------------------------------------------------------------------- serializers
class ProjectSerializer(serializers.ModelSerializer):
    preset = serializers.ChoiceField(choices=sorted(PRESETS), source="preset_key")
    rubric_version = serializers.IntegerField(source="rubric_version.version", read_only=True)

    class Meta:
        model = Project
        fields = ["id", "name", "preset", "status", "k_per_item", "show_model_hints", "rubric_version", "created_at"]
        read_only_fields = ["id", "status", "rubric_version", "created_at"]
        extra_kwargs = {"k_per_item": {"required": False}, "show_model_hints": {"required": False}}


class ItemSerializer(serializers.ModelSerializer):
    class Meta:
        model = Item
        fields = ["id", "external_id", "version", "data", *STRATA_KEYS, "meta", "created_at"]


class ImportJobSerializer(serializers.ModelSerializer):
    percent = serializers.IntegerField(
        read_only=True, help_text="how far the import is, 0-100 (while it runs, the report holds its progress)"
    )

    class Meta:
        model = ImportJob
        fields = [
            "id",
            "project",
            "status",
            "percent",
            "original_name",
            "data_format",
            "report",
            "created_at",
            "finished_at",
        ]


class ImportUploadSerializer(serializers.Serializer):
    data = serializers.FileField(help_text="JSONL or CSV file")
    images = serializers.FileField(required=False, help_text="zip of images")


#: the import's 400: the failed job's report, or (no job made) the upload's fields and why
IMPORT_REFUSED = {
    "oneOf": [
        {"$ref": "#/components/schemas/ImportJob"},
        {
            "type": "object",
            "description": "the upload itself was refused, no job made: field name -> reasons",
            "properties": {
                name: {"type": "array", "items": {"type": "string"}} for name in ("data", "images", "non_field_errors")
            }
            | {"detail": {"type": "string"}},
            "additionalProperties": False,
            "minProperties": 1,
        },
    ]
}


class AnnotationImportSerializer(serializers.ModelSerializer):
    percent = serializers.IntegerField(read_only=True, help_text="how far the import is, 0-100")
    source = serializers.CharField(
        source="source_label", read_only=True, help_text="how the exports mark these ratings"
    )

    class Meta:
        model = AnnotationImport
        fields = [
            "id",
            "project",
            "status",
            "preview",
            "percent",
            "original_name",
            "data_format",
            "item_key",
            "mapping",
            "sha256",
            "source",
            "report",
            "created_at",
            "finished_at",
        ]


class AnnotationImportUploadSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="the exported annotations")
    format = serializers.ChoiceField(choices=[])
    item_key = serializers.CharField(
        required=False, default="id", help_text="id (the external id) or a field of the items' data, e.g. pair_id"
    )
    map = serializers.ListField(
        child=serializers.CharField(allow_blank=True),
        required=False,
        default=list,
        help_text="FROM=TO: the source field FROM answers the rubric question TO (FROM= leaves it out); repeatable",
    )
    preview = serializers.BooleanField(
        required=False, default=False, help_text="check only: the mapping and the counts, nothing written"
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # the formats are the reader registry's as it is now (a reader registered later counts)
        self.fields["format"].choices = registry.keys(registry.HUMAN)


# ------------------------------------------------------------------------- viewsets
class ProjectViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet
):
    """Projects the caller manages (researchers, admins) or annotates."""

    serializer_class = ProjectSerializer
    queryset = Project.objects.none()  # the schema's id type; rows come from get_queryset

    def get_queryset(self):
        return selectors.visible_projects(self.request.user).select_related("rubric_version").order_by("id")

    def _managed(self) -> Project:
        return managed_visible_project(self.request.user, self.kwargs["pk"])

    def perform_create(self, serializer):
        if not selectors.can_create_projects(self.request.user):
            raise PermissionDenied("only researchers and admins can create projects")
        data = serializer.validated_data
        serializer.instance = projects.create_project(
            name=data["name"],
            preset_key=data["preset_key"],
            created_by=self.request.user,
            k_per_item=data.get("k_per_item"),
            show_model_hints=data.get("show_model_hints"),
        )

    @extend_schema(
        request=ImportUploadSerializer,
        responses={201: ImportJobSerializer, 202: ImportJobSerializer, 400: IMPORT_REFUSED},
    )
    @action(detail=True, methods=["post"], parser_classes=[MultiPartParser, FormParser], url_path="import")
    def import_items(self, request: Request, pk: str | None = None) -> Response:
        """Import items (all or nothing). Small files answer 201 with the report, or 400 with the
        problems by line; large ones answer 202 and run on a worker: poll /api/imports/{id}/."""
        project = self._managed()
        upload = ImportUploadSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
        data, images = upload.validated_data["data"], upload.validated_data.get("images")
        job = importing.start_import(
            project=project,
            user=request.user,
            data_name=data.name,
            data_stream=data.chunks(),
            images_name=images.name if images else None,
            images_stream=images.chunks() if images else None,
        )
        code = {ImportJob.Status.DONE: 201, ImportJob.Status.FAILED: 400}.get(job.status, 202)
        return Response(ImportJobSerializer(job).data, status=code)

    @extend_schema(
        request=AnnotationImportUploadSerializer,
        responses={200: dict, 201: AnnotationImportSerializer, 202: AnnotationImportSerializer, 400: dict},
    )
    @action(detail=True, methods=["post"], parser_classes=[MultiPartParser, FormParser], url_path="annotation-imports")
    def annotation_imports(self, request: Request, pk: str | None = None) -> Response:
        """Import human annotations made in another tool (Label Studio JSON, long CSV / JSONL,
        wide CSV), all or nothing. ``preview`` answers 200 with the mapping, the counts and the
        problems, writing nothing; for a large file 202 with a preview job (``preview`` true) whose
        report is that preview once it is done. Otherwise small files answer 201 with the job (its report), or
        400 with the problems by task / line; large ones 202: poll /api/annotation-imports/{id}/."""
        project = self._managed()
        upload = AnnotationImportUploadSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
        data = upload.validated_data
        mapping = annotation_import.parse_mapping(data["map"])
        staged = annotation_import.stage_annotations(
            project=project,
            user=request.user,
            name=data["file"].name,
            chunks=data["file"].chunks(),
            data_format=data["format"],
        )
        if data["preview"]:
            try:
                preview = annotation_import.preview_annotations(
                    project=project,
                    user=request.user,
                    path=staged.path,
                    original_name=data["file"].name,
                    data_format=data["format"],
                    item_key=data["item_key"],
                    mapping=mapping,
                    keeps_upload=False,  # a preview job drops it once it has ended
                )
            except BaseException:
                annotation_import.discard_staged_token(staged.token)
                raise
            if isinstance(preview, AnnotationImport):
                # a large file's preview runs on a worker (issue 37, M3): poll the job, whose
                # report is the preview
                return Response(AnnotationImportSerializer(preview).data, status=202)
            annotation_import.discard_staged_token(staged.token)
            return Response(preview.as_dict(), status=200)
        job = annotation_import.start_annotation_import(
            project=project,
            user=request.user,
            path=staged.path,
            original_name=data["file"].name,
            data_format=data["format"],
            item_key=data["item_key"],
            mapping=mapping,
        )
        code = {AnnotationImport.Status.DONE: 201, AnnotationImport.Status.FAILED: 400}.get(job.status, 202)
        return Response(AnnotationImportSerializer(job).data, status=code)


class AnnotationImportViewSet(mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """An import of human annotations: its status, progress, provenance and report."""

    serializer_class = AnnotationImportSerializer
    queryset = AnnotationImport.objects.none()

    def get_queryset(self):
        return AnnotationImport.objects.filter(project__in=selectors.managed_projects(self.request.user).values("pk"))


class ImportJobViewSet(mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = ImportJobSerializer
    queryset = ImportJob.objects.none()  # the schema's id type; rows come from get_queryset

    def get_queryset(self):
        return ImportJob.objects.filter(project__in=selectors.managed_projects(self.request.user).values("pk"))
