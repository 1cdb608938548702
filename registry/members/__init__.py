"""Who belongs to which practice, and how they get there: the registry office, invitations,
and the record of every change to a membership.

* :mod:`registry.office`: the registry-office role (a permission, ``registry.
  view_registry``): its holders see and manage every practice as that practice's staff would.
* :mod:`registry.models`: an :class:`Invitation` (only a digest of its token is
  stored) and a :class:`MembershipEvent` per change (who, when, what).
* :mod:`registry.members.services`: the writes (invite, resend, cancel, accept, change a
  role, remove, onboard a practice), each recorded as an event.
* :mod:`registry.members.views`: the Members page, the new-practice page and the page that
  accepts an invitation.
"""
