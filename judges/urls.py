"""Judge URLs. Mounted at the root by config/urls.py: ``path("", include("judges.urls"))``.
Pages under ``projects/<id>/judges/``; API under ``api/projects/<id>/judges/`` and
``api/judge-runs/``, which the other apps do not claim."""

from django.urls import path

from . import api, views

urlpatterns = [
    path("projects/<int:project_id>/judges/", views.judges_page, name="judges"),
    path("projects/<int:project_id>/judges/import/", views.import_outputs, name="judge_import"),
    path("projects/<int:project_id>/judges/imports/", views.judge_imports, name="judge_imports"),
    path("projects/<int:project_id>/judges/<int:config_id>/run/", views.start_run, name="judge_start_run"),
    path("projects/<int:project_id>/judges/<int:config_id>/", views.judge_detail, name="judge_detail"),
    path("projects/<int:project_id>/judges/<int:config_id>/hide/", views.judge_hide, name="judge_hide"),
    path("projects/<int:project_id>/judges/<int:config_id>/label/", views.judge_short_label, name="judge_short_label"),
    path("projects/<int:project_id>/judges/<int:config_id>/delete/", views.judge_delete, name="judge_delete"),
    path("projects/<int:project_id>/judges/runs/<int:run_id>/", views.run_detail, name="judge_run"),
    path("projects/<int:project_id>/judges/runs/<int:run_id>/progress/", views.run_progress, name="judge_run_progress"),
    path("projects/<int:project_id>/judges/runs/<int:run_id>/cancel/", views.cancel_run, name="judge_run_cancel"),
    path(
        "projects/<int:project_id>/judges/runs/<int:run_id>/rerun-failed/",
        views.rerun_failed,
        name="judge_run_rerun_failed",
    ),
    path("api/projects/<int:project_id>/judges/", api.JudgeConfigList.as_view(), name="api_judges"),
    path("api/projects/<int:project_id>/judges/import/", api.JudgeImport.as_view(), name="api_judge_import"),
    path(
        "api/projects/<int:project_id>/judges/import/<int:job_id>/",
        api.JudgeImportDetail.as_view(),
        name="api_judge_import_detail",
    ),
    path("api/projects/<int:project_id>/judges/<int:config_id>/", api.JudgeConfigDetail.as_view(), name="api_judge"),
    path(
        "api/projects/<int:project_id>/judges/<int:config_id>/runs/", api.JudgeRunStart.as_view(), name="api_judge_runs"
    ),
    path("api/judge-runs/<int:run_id>/", api.JudgeRunDetail.as_view(), name="api_judge_run"),
    path("api/judge-runs/<int:run_id>/cancel/", api.JudgeRunCancel.as_view(), name="api_judge_run_cancel"),
    path(
        "api/judge-runs/<int:run_id>/rerun-failed/",
        api.JudgeRunRerunFailed.as_view(),
        name="api_judge_run_rerun_failed",
    ),
    path("api/judge-runs/<int:run_id>/outputs/", api.JudgeRunOutputs.as_view(), name="api_judge_run_outputs"),
    path("api/judge-runs/<int:run_id>/failures/", api.JudgeRunFailures.as_view(), name="api_judge_run_failures"),
]
