"""The human side's pages and API: projects, members, imports, images, preset examples."""

from django.urls import include, path
from rest_framework.routers import DefaultRouter

from . import annotation_import_views, api, views

router = DefaultRouter()
router.register("projects", api.ProjectViewSet, basename="api-project")
router.register("imports", api.ImportJobViewSet, basename="api-import")
router.register("annotation-imports", api.AnnotationImportViewSet, basename="api-annotation-import")

urlpatterns = [
    path("projects/new/", views.project_create, name="project_create"),
    path("projects/<int:project_id>/", views.project_detail, name="project_detail"),
    path("projects/<int:project_id>/import/", views.project_import, name="project_import"),
    path(
        "projects/<int:project_id>/annotation-imports/",
        annotation_import_views.annotation_imports,
        name="annotation_imports",
    ),
    path(
        "projects/<int:project_id>/annotation-imports/preview/",
        annotation_import_views.annotation_import_preview,
        name="annotation_import_preview",
    ),
    path(
        "projects/<int:project_id>/annotation-imports/confirm/",
        annotation_import_views.annotation_import_confirm,
        name="annotation_import_confirm",
    ),
    path(
        "annotation-imports/<int:job_id>/",
        annotation_import_views.annotation_import_detail,
        name="annotation_import_detail",
    ),
    path("projects/<int:project_id>/members/", views.project_members, name="project_members"),
    path("projects/<int:project_id>/assignment/", views.project_assignment, name="project_assignment"),
    path("projects/<int:project_id>/status/", views.project_status, name="project_status"),
    path(
        "presets/<str:preset_key>/example.jsonl", views.preset_example, {"kind": "jsonl"}, name="preset_example_jsonl"
    ),
    path("presets/<str:preset_key>/example.zip", views.preset_example, {"kind": "zip"}, name="preset_example_zip"),
    path("imports/<int:job_id>/", views.import_detail, name="import_detail"),
    path("assets/<str:sha256>/", views.asset, name="asset"),
    path("assets/<str:sha256>/thumb/", views.asset, {"thumb": True}, name="asset_thumb"),
    path("api/", include(router.urls)),
]
