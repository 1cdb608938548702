"""The Members page (``/settings/members/``), the new-practice page of the registry office
(``/settings/practices/new/``) and the invitation pages (``/accounts/invitation/``).

Every lookup on the Members page is within the practice in view, so another practice's
members and invitations are a 404. A link not mailed (no ``EMAIL_URL``, or the mail server
refused it) is shown once, on a page sent with ``Cache-Control: no-store``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.utils.http import urlencode
from django.views.decorators.http import require_http_methods

from registry.members.forms import InviteForm, PracticeNewForm, RoleForm
from registry.members.mail import mail_configured
from registry.members.services import (
    SentInvitation,
    invitation_cancel,
    invitation_resend,
    invitation_send,
    last_staff,
    membership_remove,
    membership_role_change,
    practice_onboard,
)
from registry.members.throttle import InvitationThrottled
from registry.models import Invitation, Membership, MembershipEvent, Practice
from registry.office import is_registry_office
from registry.settings_area import (
    member_view,
    optional_settings_context,
    settings_context,
    signed_in_user,
)

HISTORY_LIMIT = 20
THROTTLED = "Too many invitations were sent in the last while: try again later."


def link_origin(request: HttpRequest) -> str:
    """The site's address in an invitation's link. A mailed link takes ``REGISTRY_PUBLIC_URL``,
    never the request's Host header (a client chooses it); with no mail configured the link is
    shown only to the person who asked, at the address they used."""
    if settings.REGISTRY_PASSWORD_RESET and settings.REGISTRY_PUBLIC_URL:
        return str(settings.REGISTRY_PUBLIC_URL)
    return f"{request.scheme}://{request.get_host()}"


def may_manage_members(membership: Membership) -> bool:
    """Staff of the practice (and the registry office, who stand in as staff)."""
    return membership.role == Membership.Role.STAFF


def members_url(practice: Practice) -> str:
    return f"{reverse('registry:members')}?{urlencode({'practice': practice.slug})}"


@require_http_methods(["GET", "HEAD", "POST"])
@member_view
def members_page(request: HttpRequest, membership: Membership) -> HttpResponse:
    if request.method != "POST":
        return _members_render(request, membership, InviteForm())
    if not may_manage_members(membership):
        raise PermissionDenied
    action = ACTIONS.get(request.POST.get("action", ""))
    if action is None:
        raise Http404("No such action.")
    return action(request, membership)


def _invite(request: HttpRequest, membership: Membership) -> HttpResponse:
    form = InviteForm(request.POST)
    if not form.is_valid():
        return _members_render(request, membership, form, status=400)
    try:
        sent = invitation_send(
            practice=membership.practice,
            email=form.cleaned_data["email"],
            role=form.cleaned_data["role"],
            by=signed_in_user(request),
            origin=link_origin(request),
        )
    except ValidationError as error:
        form.add_error("email", error)
        return _members_render(request, membership, form, status=400)
    except InvitationThrottled:
        form.add_error(None, THROTTLED)
        return _members_render(request, membership, form, status=429)
    return _sent(request, membership, sent)


def _resend(request: HttpRequest, membership: Membership) -> HttpResponse:
    invitation = _pending_invitation(request, membership)
    try:
        sent = invitation_resend(
            invitation=invitation, by=signed_in_user(request), origin=link_origin(request)
        )
    except InvitationThrottled:
        messages.error(request, THROTTLED)
        return redirect(members_url(membership.practice))
    return _sent(request, membership, sent)


def _cancel(request: HttpRequest, membership: Membership) -> HttpResponse:
    invitation = _pending_invitation(request, membership)
    invitation_cancel(invitation=invitation, by=signed_in_user(request))
    messages.success(request, f"The invitation to {invitation.email} is cancelled.")
    return redirect(members_url(membership.practice))


def _change_role(request: HttpRequest, membership: Membership) -> HttpResponse:
    target = _member(request, membership)
    form = RoleForm(request.POST)
    if not form.is_valid():
        raise Http404("No such role.")
    role = form.cleaned_data["role"]
    try:
        membership_role_change(membership=target, role=role, by=signed_in_user(request))
    except ValidationError as error:
        messages.error(request, error.messages[0])
    else:
        label = Membership.Role(role).label.lower()
        messages.success(request, f"{target.user.get_username()} is now {label}.")
    return redirect(members_url(membership.practice))


def _remove(request: HttpRequest, membership: Membership) -> HttpResponse:
    target = _member(request, membership)
    try:
        membership_remove(membership=target, by=signed_in_user(request))
    except ValidationError as error:
        messages.error(request, error.messages[0])
        return redirect(members_url(membership.practice))
    messages.success(request, f"{target.user.get_username()} is no longer a member.")
    if target.user_id == signed_in_user(request).pk:
        return redirect("settings")  # removed themselves: this practice is no longer theirs
    return redirect(members_url(membership.practice))


ACTIONS = {
    "invite": _invite,
    "resend": _resend,
    "cancel": _cancel,
    "role": _change_role,
    "remove": _remove,
}


def _posted_id(request: HttpRequest, name: str) -> int:
    value = request.POST.get(name, "")
    if not value.isdigit() or len(value) > 18:
        raise Http404("No such row.")
    return int(value)


def _pending_invitation(request: HttpRequest, membership: Membership) -> Invitation:
    pending = Invitation.objects.filter(
        practice=membership.practice, accepted_at__isnull=True, cancelled_at__isnull=True
    )
    invitation = pending.filter(pk=_posted_id(request, "invitation")).first()
    if invitation is None:
        raise Http404("No such invitation.")
    return invitation


def _member(request: HttpRequest, membership: Membership) -> Membership:
    members = Membership.objects.filter(practice=membership.practice).select_related("user")
    target = members.filter(pk=_posted_id(request, "member")).first()
    if target is None:
        raise Http404("No such member.")
    return target


def _sent(request: HttpRequest, membership: Membership, sent: SentInvitation) -> HttpResponse:
    email = sent.invitation.email
    if sent.mailed:
        messages.success(request, f"Invitation sent to {email}.")
        return redirect(members_url(membership.practice))
    context = settings_context(request, membership) | _invitation_facts() | {"sent": sent}
    response = render(request, "members/invitation_link.html", context)
    add_never_cache_headers(response)
    return response


def _members_render(
    request: HttpRequest, membership: Membership, form: InviteForm, *, status: int = 200
) -> HttpResponse:
    practice = membership.practice
    members = list(
        Membership.objects.filter(practice=practice)
        .select_related("user")
        .order_by("role", "user__username")
    )
    pending = Invitation.objects.filter(
        practice=practice, accepted_at__isnull=True, cancelled_at__isnull=True
    ).order_by("email")
    events = MembershipEvent.objects.filter(practice=practice)[:HISTORY_LIMIT]
    context = (
        settings_context(request, membership)
        | {
            "members": [(member, last_staff(member)) for member in members],
            "invitations": pending,
            "events": events,
            "form": form,
            "roles": Membership.Role.choices,
            "can_manage": may_manage_members(membership),
        }
        | _invitation_facts()
    )
    return render(request, "members/members.html", context, status=status)


def _invitation_facts() -> dict[str, Any]:
    days = settings.REGISTRY_INVITATION_DAYS
    return {"invitation_days": days, "mail_configured": mail_configured()}


@require_http_methods(["GET", "HEAD", "POST"])
@login_required
def practice_new_page(request: HttpRequest) -> HttpResponse:
    user = signed_in_user(request)
    if not is_registry_office(user):
        raise PermissionDenied
    form = PracticeNewForm(request.POST if request.method == "POST" else None)
    status = 200 if request.method != "POST" else 400
    if form.is_valid():
        try:
            practice, sent = practice_onboard(
                slug=form.cleaned_data["slug"],
                name=form.cleaned_data["name"],
                sandbox=form.cleaned_data["kind"] == "sandbox",
                email=form.cleaned_data["email"],
                by=user,
                origin=link_origin(request),
            )
        except ValidationError as error:
            form.add_error(None, error)
        except InvitationThrottled:
            form.add_error(None, THROTTLED)
            status = 429
        else:
            stand_in = Membership(user=user, practice=practice, role=Membership.Role.STAFF)
            messages.success(request, f"{practice.label} is added.")
            return _sent(request, stand_in, sent)
    context: dict[str, Any] = optional_settings_context(request) | {"form": form}
    return render(request, "members/practice_new.html", context, status=status)
