from django.urls import path

from . import views

urlpatterns = [
    path("account/tokens/", views.tokens, name="api_tokens"),
    path("account/tokens/<int:token_id>/revoke/", views.revoke, name="api_token_revoke"),
]
