"""The invitation pages under ``/accounts/invitation/``: the link, then the page it leads to."""

from __future__ import annotations

from django.urls import path

from registry.members import accept

urlpatterns = [
    path("accept/", accept.invitation_accept_page, name="invitation_accept"),
    path("<str:token>/", accept.invitation_open, name="invitation_open"),
]
