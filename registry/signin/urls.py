"""The sign-in and password reset pages under ``/accounts/``, before Django's own (which
they replace)."""

from __future__ import annotations

from django.urls import path

from registry.signin import reset

urlpatterns = [
    path("login/", reset.sign_in, name="login"),
    path("password_reset/", reset.password_reset, name="password_reset"),
    path("password_reset/done/", reset.password_reset_done, name="password_reset_done"),
    path("reset/<uidb64>/<token>/", reset.password_reset_confirm, name="password_reset_confirm"),
    path("reset/done/", reset.password_reset_complete, name="password_reset_complete"),
]
