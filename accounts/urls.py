from django.urls import path

from . import invitation_views, views

urlpatterns = [
    path("account/tokens/", views.tokens, name="api_tokens"),
    path("account/tokens/<int:token_id>/revoke/", views.revoke, name="api_token_revoke"),
    path("account/language/", views.set_language, name="set_language"),
    path("projects/<int:project_id>/annotators/", invitation_views.annotators_page, name="project_annotators"),
    path(
        "projects/<int:project_id>/annotators/accounts/",
        invitation_views.account_create,
        name="annotator_account_create",
    ),
    path(
        "projects/<int:project_id>/annotators/invitations/",
        invitation_views.invitation_create,
        name="invitation_create",
    ),
    path(
        "projects/<int:project_id>/annotators/invitations/<int:invitation_id>/revoke/",
        invitation_views.invitation_revoke,
        name="invitation_revoke",
    ),
    path("invite/<str:token>/", invitation_views.invitation_accept, name="invitation_accept"),
]
