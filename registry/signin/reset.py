"""The password reset pages, in the site's look, offered only when mail is configured.

``/accounts/password_reset/`` asks for an address and always answers the same way (a mail
is on its way if an account has it); the mail is sent by the worker (registry/signin/mail.py).
Requests are throttled per client address (429). The link in the mail works for
``PASSWORD_RESET_TIMEOUT`` (an hour) and once: setting the password changes what the link's
token was made from. A password set this way also lifts the lock-out of the account at the
address it was set from: whoever set it reads the account's mail. Without ``EMAIL_URL``
every reset page is a 404 saying to ask a registry administrator.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from axes.utils import reset as axes_reset
from django import forms
from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import SetPasswordForm
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from lib.client import client_address
from registry.signin.mail import requester_of
from registry.signin.services import password_reset_request
from registry.signin.throttle import reset_request_refusal

View = Callable[..., HttpResponseBase]


class PasswordResetRequestForm(forms.Form):
    email = forms.EmailField(
        label="Email address",
        max_length=254,
        help_text="The address your account has in the registry.",
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )


def offered(view: View) -> View:
    """The view when mail is configured; otherwise the page saying to ask an administrator."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not settings.REGISTRY_PASSWORD_RESET:
            return render(request, "registration/password_reset_unavailable.html", status=404)
        return view(request, *args, **kwargs)

    return wrapper


@offered
@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def password_reset(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        form = PasswordResetRequestForm()
        return render(request, "registration/password_reset_form.html", {"form": form})
    wait = reset_request_refusal(request)
    if wait is not None:
        response = render(
            request, "registration/password_reset_throttled.html", {"minutes": -(-wait // 60)}
        )
        response.status_code = 429
        response["Retry-After"] = str(wait)
        return response
    form = PasswordResetRequestForm(request.POST)
    if not form.is_valid():
        context = {"form": form}
        return render(request, "registration/password_reset_form.html", context, status=400)
    requester = requester_of(client_address(request))
    password_reset_request(email=form.cleaned_data["email"], requester=requester)
    return redirect("password_reset_done")


@offered
@require_http_methods(["GET", "HEAD"])
def password_reset_done(request: HttpRequest) -> HttpResponse:
    context = {"minutes": settings.PASSWORD_RESET_TIMEOUT // 60}
    return render(request, "registration/password_reset_done.html", context)


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    success_url = reverse_lazy("password_reset_complete")
    template_name = "registration/password_reset_confirm.html"

    def form_valid(self, form: SetPasswordForm) -> HttpResponse:
        response = super().form_valid(form)
        axes_reset(ip=client_address(self.request), username=form.user.get_username())
        return response


password_reset_confirm = offered(PasswordResetConfirmView.as_view())


class SignInView(auth_views.LoginView):
    """Django's sign-in page, saying how to get back in without the password."""

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        offered = settings.REGISTRY_PASSWORD_RESET
        return super().get_context_data(**kwargs) | {"password_reset_offered": offered}


sign_in = SignInView.as_view()


@offered
@require_http_methods(["GET", "HEAD"])
def password_reset_complete(request: HttpRequest) -> HttpResponse:
    return render(request, "registration/password_reset_complete.html")
