"""Curation URLs, mounted at the root by config/urls.py: ``path("", include("curation.urls"))``.
Pages under ``projects/<id>/curation/``; API under ``api/projects/<id>/{acceptance-policy,
decisions,revisions,exports,accepted-items}/`` and ``api/exports/<id>/`` (none of which the
annotation app's router claims)."""

from django.urls import path, re_path

from . import api, item_api, item_views, views

urlpatterns = [
    path("projects/<int:project_id>/items/", item_views.item_browser, name="item_browser"),
    path("projects/<int:project_id>/items/<int:item_id>/preview/", item_views.item_preview, name="item_preview"),
    re_path(r"^api/projects/(?P<pk>[^/.]+)/items/$", item_api.ProjectItemsView.as_view(), name="api-project-items"),
    path("projects/<int:project_id>/curation/", views.curation_page, name="curation"),
    path("projects/<int:project_id>/curation/preview/", views.preview, name="curation_preview"),
    path("projects/<int:project_id>/curation/policy/", views.save_policy, name="curation_policy"),
    path("projects/<int:project_id>/curation/items/<int:item_id>/override/", views.override, name="curation_override"),
    path("projects/<int:project_id>/curation/revisions/", views.import_revisions, name="curation_revisions"),
    path("projects/<int:project_id>/curation/exports/", views.start_export, name="curation_export_start"),
    path("projects/<int:project_id>/curation/exports/<int:export_id>/", views.export_status, name="curation_export"),
    path("exports/<int:export_id>/download/", views.download, name="curation_export_download"),
    path("exports/<int:export_id>/files/<path:name>", views.download, name="curation_export_file"),
    path("api/projects/<int:project_id>/acceptance-policy/", api.PolicyView.as_view(), name="api_curation_policy"),
    path(
        "api/projects/<int:project_id>/acceptance-policy/preview/",
        api.PreviewView.as_view(),
        name="api_curation_preview",
    ),
    path("api/projects/<int:project_id>/decisions/", api.DecisionListView.as_view(), name="api_curation_decisions"),
    path("api/projects/<int:project_id>/decisions/apply/", api.ApplyView.as_view(), name="api_curation_apply"),
    path(
        "api/projects/<int:project_id>/decisions/<int:item_id>/override/",
        api.OverrideView.as_view(),
        name="api_curation_override",
    ),
    path(
        "api/projects/<int:project_id>/decisions/<int:item_id>/history/",
        api.HistoryView.as_view(),
        name="api_curation_history",
    ),
    path(
        "api/projects/<int:project_id>/revisions/import/",
        api.RevisionImportView.as_view(),
        name="api_curation_revisions",
    ),
    path("api/projects/<int:project_id>/exports/", api.ExportListView.as_view(), name="api_curation_exports"),
    path(
        "api/projects/<int:project_id>/accepted-items/",
        api.AcceptedItemsView.as_view(),
        name="api_curation_accepted_items",
    ),
    path("api/exports/<int:export_id>/", api.ExportDetailView.as_view(), name="api_curation_export"),
    path(
        "api/exports/<int:export_id>/download/", api.ExportDownloadView.as_view(), name="api_curation_export_download"
    ),
    path(
        "api/exports/<int:export_id>/files/<path:name>",
        api.ExportDownloadView.as_view(),
        name="api_curation_export_file",
    ),
]
