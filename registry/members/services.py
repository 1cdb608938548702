"""Writes to memberships and invitations; each one recorded as a :class:`MembershipEvent`.

Who may call which is decided by the pages and commands (staff of the practice, the registry
office); these apply the rules every caller shares: a link works once and expires, the last
staff member stays, and nothing here answers differently for an address that has an account.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.utils import timezone

from registry.members.mail import invitation_link, invitation_mail_send, mail_configured
from registry.members.throttle import invitation_count
from registry.models import Invitation, Membership, MembershipEvent, Practice
from registry.office import office_permission
from registry.review.services import reviewer_admin_access_grant
from registry.services import membership_add, slug_check

Action = MembershipEvent.Action


@dataclass(frozen=True)
class SentInvitation:
    """An invitation just issued, and its link: mailed, or to be shown once to the inviter."""

    invitation: Invitation
    link: str
    mailed: bool


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def email_normalised(email: str) -> str:
    """The address as stored and compared: trimmed and lower-cased; refused if not one."""
    address = email.strip().lower()
    validate_email(address)
    return address


def event_record(
    *, practice: Practice | None, action: str, subject: str, role: str = "", by: User | None
) -> MembershipEvent:
    return MembershipEvent.objects.create(
        practice=practice,
        action=action,
        subject=subject,
        role=role,
        by=by,
        by_username=by.get_username() if by else "",
    )


def invitation_send(
    *, practice: Practice | None, email: str, role: str, by: User | None, origin: str
) -> SentInvitation:
    """Invite ``email`` to ``practice`` with ``role``; a pending invitation to it is renewed.

    Raises ``ValidationError`` for a bad address or role, or for a present member, and
    :class:`registry.members.throttle.InvitationThrottled` past a limit.
    """
    address = email_normalised(email)
    if practice is not None and role not in Membership.Role.values:
        raise ValidationError("Choose a role: staff or reviewer.")
    member = Membership.objects.filter(practice=practice, user__email__iexact=address)
    if practice is not None and member.exists():
        raise ValidationError(f"{address} is already a member of this practice.")
    practice_id = practice.pk if practice else None
    invitation_count(practice_id=practice_id, inviter_id=by.pk if by else None)
    pending = Invitation.objects.filter(
        practice=practice, email=address, accepted_at__isnull=True, cancelled_at__isnull=True
    ).first()
    invitation = pending or Invitation(practice=practice, email=address, invited_by=by)
    invitation.role = role
    token = _issue(invitation)
    event_record(practice=practice, action=Action.INVITED, subject=address, role=role, by=by)
    return _deliver(invitation, token, origin)


def invitation_resend(*, invitation: Invitation, by: User | None, origin: str) -> SentInvitation:
    """A new link for an invitation not yet used or cancelled; the old link stops working."""
    if invitation.accepted_at is not None or invitation.cancelled_at is not None:
        raise ValidationError("This invitation was already used or cancelled.")
    practice_id = invitation.practice_id
    invitation_count(practice_id=practice_id, inviter_id=by.pk if by else None)
    token = _issue(invitation)
    action = Action.INVITATION_RESENT
    event_record(practice=invitation.practice, action=action, subject=invitation.email, by=by)
    return _deliver(invitation, token, origin)


def invitation_cancel(*, invitation: Invitation, by: User | None) -> None:
    if invitation.accepted_at is not None or invitation.cancelled_at is not None:
        return  # already settled: cancelling twice is harmless
    invitation.cancelled_at = timezone.now()
    invitation.save(update_fields=["cancelled_at"])
    action = Action.INVITATION_CANCELLED
    event_record(practice=invitation.practice, action=action, subject=invitation.email, by=by)


def invitation_find(token: str) -> Invitation | None:
    """The pending invitation whose link carries ``token``; None for any other link."""
    found = Invitation.objects.select_related("practice").filter(token_digest=token_digest(token))
    invitation = found.first()
    return invitation if invitation is not None and invitation.is_pending else None


def invitation_accept(*, invitation: Invitation, user: User) -> Membership | None:
    """Use the invitation once: ``user`` joins its practice (None for an account invitation).

    An existing membership keeps its role. Raises ``ValidationError`` if the link was used,
    cancelled or expired meanwhile (the row is locked, so two tabs cannot both use it).
    """
    with transaction.atomic():
        locked = Invitation.objects.select_for_update().get(pk=invitation.pk)
        if not locked.is_pending:
            raise ValidationError("This invitation link is no longer valid.")
        locked.accepted_at, locked.accepted_by = timezone.now(), user
        locked.save(update_fields=["accepted_at", "accepted_by"])
        if locked.practice is None:
            return None
        membership = Membership.objects.filter(practice=locked.practice, user=user).first()
        if membership is None:
            membership, _ = membership_add(practice=locked.practice, user=user, role=locked.role)
            _reviewer_access(membership)
            event_record(
                practice=locked.practice,
                action=Action.JOINED,
                subject=user.get_username(),
                role=locked.role,
                by=user,
            )
        return membership


def invitation_accept_new(
    *, invitation: Invitation, first_name: str, last_name: str, password: str
) -> User:
    """A new account (or a password for one that never had one) and the invitation used, at
    once: if the link was used meanwhile, no account is made either."""
    with transaction.atomic():
        user = invitee_account_save(
            invitation=invitation, first_name=first_name, last_name=last_name, password=password
        )
        invitation_accept(invitation=invitation, user=user)
    return user


def invitee_account_save(
    *, invitation: Invitation, first_name: str, last_name: str, password: str
) -> User:
    """Create the invited person's account; the username is the address.

    An existing account is never changed by a practice's invitation (its owner signs in
    instead, :mod:`registry.members.accept`): a link shown to an inviter must not set the
    password of someone else's account. Only an account invitation, made by an operator with
    ``grantregistryoffice`` for an account that never had a password, gives it one.
    """
    email = invitation.email
    user = User.objects.filter(email__iexact=email).order_by("pk").first()
    if user is None:
        user = User(username=email[:150], email=email)
    elif invitation.practice is not None or user.has_usable_password():
        raise ValidationError("This address has an account: sign in to accept.")
    user.first_name, user.last_name = first_name, last_name
    user.set_password(password)
    user.save()
    return user


def membership_role_change(*, membership: Membership, role: str, by: User | None) -> None:
    if role not in Membership.Role.values:
        raise ValidationError("Choose a role: staff or reviewer.")
    with transaction.atomic():
        _lock_practice(membership.practice)
        if membership.role == Membership.Role.STAFF and role != Membership.Role.STAFF:
            _keep_a_staff_member(membership, "demoted")
        membership.role = role
        membership.save(update_fields=["role"])
        _reviewer_access(membership)
        event_record(
            practice=membership.practice,
            action=Action.ROLE_CHANGED,
            subject=membership.user.get_username(),
            role=role,
            by=by,
        )


def membership_remove(*, membership: Membership, by: User | None) -> None:
    with transaction.atomic():
        _lock_practice(membership.practice)
        if membership.role == Membership.Role.STAFF:
            _keep_a_staff_member(membership, "removed")
        subject = membership.user.get_username()
        membership.delete()
        event_record(practice=membership.practice, action=Action.REMOVED, subject=subject, by=by)


def practice_onboard(
    *, slug: str, name: str, sandbox: bool, email: str, by: User | None, origin: str
) -> tuple[Practice, SentInvitation]:
    """Add a practice and invite its first staff member, in one step (the registry office)."""
    slug_check(slug)
    address = email_normalised(email)
    with transaction.atomic():
        practice, created = Practice.objects.get_or_create(
            slug=slug, defaults={"name": name or slug, "sandbox": sandbox}
        )
        if not created:
            raise ValidationError(f"A practice with the code {slug} already exists.")
        event_record(practice=practice, action=Action.PRACTICE_ADDED, subject=slug, by=by)
        sent = invitation_send(
            practice=practice, email=address, role=Membership.Role.STAFF, by=by, origin=origin
        )
    return practice, sent


def office_grant(*, email: str) -> tuple[User, bool]:
    """Give the registry-office role to the account with ``email``, creating it if missing.

    A new account has no password: its owner sets one through an account invitation
    (``manage.py grantregistryoffice`` sends or prints it).
    """
    address = email_normalised(email)
    accounts = list(User.objects.filter(email__iexact=address).order_by("pk")[:2])
    if len(accounts) > 1:
        raise ValidationError(f"Several accounts have {address}: grant the role in the admin.")
    created = not accounts
    user = accounts[0] if accounts else User.objects.create_user(address[:150], email=address)
    user.user_permissions.add(office_permission())
    event_record(practice=None, action=Action.OFFICE_GRANTED, subject=user.get_username(), by=None)
    return user, created


def last_staff(membership: Membership) -> bool:
    """Whether ``membership`` is the practice's only staff member (who then stays staff)."""
    if membership.role != Membership.Role.STAFF:
        return False
    staff = Membership.objects.filter(
        practice_id=membership.practice_id, role=Membership.Role.STAFF
    )
    return not staff.exclude(pk=membership.pk).exists()


def _keep_a_staff_member(membership: Membership, verb: str) -> None:
    if last_staff(membership):
        raise ValidationError(
            f"The last staff member cannot be {verb}: make someone else staff first."
        )


def _reviewer_access(membership: Membership) -> None:
    """A reviewer reviews in the admin, which needs staff status (as ``addmember`` grants)."""
    if membership.role == Membership.Role.REVIEWER:
        reviewer_admin_access_grant(user=membership.user)


def _lock_practice(practice: Practice) -> None:
    """Serialise changes to one practice's staff, so two removals cannot leave none."""
    Practice.objects.select_for_update().filter(pk=practice.pk).first()


def _issue(invitation: Invitation) -> str:
    """A fresh token for the invitation (saved as its digest), and a fresh expiry."""
    token = secrets.token_urlsafe(32)
    invitation.token_digest = token_digest(token)
    invitation.expires_at = timezone.now() + timedelta(days=settings.REGISTRY_INVITATION_DAYS)
    invitation.save()
    return token


def _deliver(invitation: Invitation, token: str, origin: str) -> SentInvitation:
    link = invitation_link(token=token, origin=origin)
    mailed = mail_configured() and invitation_mail_send(invitation=invitation, link=link)
    return SentInvitation(invitation=invitation, link=link, mailed=mailed)
