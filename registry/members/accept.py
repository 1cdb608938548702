"""Accepting an invitation: ``/accounts/invitation/<token>/``, then ``.../accept/``.

The link's token is moved into the session at once and the page redirects, so the token
leaves the address bar (and any Referer), as Django's password reset does. Opening the link
changes nothing: a mail scanner that follows it uses nothing up. Then:

* no account has the address: the person gives their name and a password, and is signed in;
* an account has it: its owner signs in and accepts; the password is never touched. (Only
  the account invitation of ``grantregistryoffice`` gives a password to an account that
  never had one.)
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_safe

from registry.members.forms import AcceptForm
from registry.members.services import invitation_accept, invitation_accept_new, invitation_find
from registry.models import Invitation, Membership

SESSION_KEY = "invitation_link"  # the session entry holding the link's token
BACKEND = "django.contrib.auth.backends.ModelBackend"


@never_cache
@require_safe
def invitation_open(request: HttpRequest, token: str) -> HttpResponse:
    if invitation_find(token) is None:
        return _invalid(request)
    request.session[SESSION_KEY] = token
    return redirect("invitation_accept")


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def invitation_accept_page(request: HttpRequest) -> HttpResponse:
    token = request.session.get(SESSION_KEY)
    invitation = invitation_find(token) if isinstance(token, str) else None
    if invitation is None:
        return _invalid(request)
    holders = _holders(invitation)
    if holders:
        return _accept_as_holder(request, invitation, holders)
    return _accept_new(request, invitation)


def _holders(invitation: Invitation) -> list[User]:
    """The accounts that must sign in to accept: any with the address, for a practice's
    invitation; for an account invitation, those that already have a password."""
    accounts = list(User.objects.filter(email__iexact=invitation.email).order_by("pk"))
    if invitation.practice is None:
        return [account for account in accounts if account.has_usable_password()]
    return accounts


def _accept_as_holder(
    request: HttpRequest, invitation: Invitation, holders: list[User]
) -> HttpResponse:
    user = next((holder for holder in holders if holder.pk == request.user.pk), None)
    context = {
        "invitation": invitation,
        "signed_in_as_other": request.user.is_authenticated,
        "password_reset_offered": settings.REGISTRY_PASSWORD_RESET,
    }
    if user is None:
        sign_in = f"{reverse('login')}?{urlencode({'next': reverse('invitation_accept')})}"
        return render(request, "members/invitation_sign_in.html", context | {"sign_in": sign_in})
    if request.method != "POST":
        return render(request, "members/invitation_join.html", context)
    try:
        invitation_accept(invitation=invitation, user=user)
    except ValidationError:
        return _invalid(request)
    return _landing(request, invitation)


def _accept_new(request: HttpRequest, invitation: Invitation) -> HttpResponse:
    posted = request.POST if request.method == "POST" else None
    form = AcceptForm(posted, email=invitation.email)
    if not form.is_valid():
        context = {"invitation": invitation, "form": form}
        status = 400 if posted is not None else 200
        return render(request, "members/invitation_accept.html", context, status=status)
    try:
        user = invitation_accept_new(
            invitation=invitation,
            first_name=form.cleaned_data["first_name"],
            last_name=form.cleaned_data["last_name"],
            password=form.cleaned_data["password1"],
        )
    except ValidationError:
        return _invalid(request)
    login(request, user, backend=BACKEND)
    return _landing(request, invitation)


def _landing(request: HttpRequest, invitation: Invitation) -> HttpResponse:
    """The practice's key page, saying what to do next; the chooser for an account invitation."""
    request.session.pop(SESSION_KEY, None)
    practice = invitation.practice
    if practice is None:
        messages.success(request, "Your password is set. Choose a practice to look at.")
        return redirect("registry:practices")
    if invitation.role == Membership.Role.STAFF:
        next_step = "Next: mint an API key for your integration, below; then invite colleagues."
    else:
        next_step = "You see the key and the statistics; review suspected duplicates."
    messages.success(request, f"Welcome to {practice.label}. {next_step}")
    return redirect(f"{reverse('keys:key')}?{urlencode({'practice': practice.slug})}")


def _invalid(request: HttpRequest) -> HttpResponse:
    request.session.pop(SESSION_KEY, None)
    return render(request, "members/invitation_invalid.html", status=404)
