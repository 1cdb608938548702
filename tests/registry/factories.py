"""Rows for the review and statistics tests, written straight to the database (factory-boy).

The lifecycle tests go through the API and the pipeline; these build exactly the records a
figure needs, so each test reads as its own arithmetic.
"""

from __future__ import annotations

import hashlib
from uuid import uuid4

import factory
from django.contrib.auth.models import User

from registry.matching import match_keys, match_keys_write
from registry.models import Attendance, Child, Membership, Practice, Provider, Record
from registry.statistics.counts import counts_kept

PASSWORD = "correct horse battery staple"


class PracticeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Practice
        django_get_or_create = ["slug"]

    slug = factory.Sequence(lambda n: f"practice-{n}")
    name = factory.LazyAttribute(lambda p: p.slug.replace("-", " ").title())


class RecordFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Record

    practice = factory.SubFactory(PracticeFactory)
    external_record_id = factory.Sequence(lambda n: f"C-{n:05d}")
    birth_year = 2024
    consent_granted = True
    fingerprint = factory.Sequence(lambda n: hashlib.sha256(str(n).encode()).hexdigest())


class ChildFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Child

    record = factory.SubFactory(RecordFactory)
    birth_order = 1
    outcome = Child.Outcome.LIVE_BIRTH
    sex = "female"
    birth_year = factory.LazyAttribute(lambda c: c.record.birth_year)
    birth_weight_grams = 3300
    gestational_age_weeks = 39
    gestational_age_days = 2
    apgar_1 = 8
    apgar_5 = 9


class ProviderFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Provider
        django_get_or_create = ["practice", "stable_id"]

    practice = factory.SubFactory(PracticeFactory)
    stable_id = factory.Sequence(lambda n: f"P-{n}")
    display_name = factory.Sequence(lambda n: f"Provider {n}")
    role = Provider.Role.MIDWIFE


def birth(
    practice: Practice,
    *,
    attended_by: tuple[str, ...] = (),
    present: tuple[str, ...] = (),
    children: int = 1,
    **record_fields,
) -> Record:
    """A record with ``children`` children (``child__*`` fields apply to each) and attendants.

    ``attended_by`` and ``present`` name provider roles; each gets a provider of its own.
    A live record gets its match keys, with no times or orders (``child_keys`` may give each
    child's ``(time key, declared order)``): records sharing a fingerprint resemble.
    The statistics' counts (:mod:`registry.statistics.counts`) take the record in, as the
    pipeline does.
    """
    child_keys = record_fields.pop("child_keys", None)
    child_fields = {
        key.removeprefix("child__"): value
        for key, value in list(record_fields.items())
        if key.startswith("child__")
    }
    for key in child_fields:
        record_fields.pop(f"child__{key}")
    record_id = record_fields.pop("id", None) or uuid4()
    # As every writer of records does, so the statistics' counts include it.
    with counts_kept(practice_id=practice.pk, record_ids=[record_id]):
        record = RecordFactory(id=record_id, practice=practice, **record_fields)
        for order in range(1, children + 1):
            ChildFactory(record=record, birth_order=order, **child_fields)
        for kind, roles in (
            (Attendance.Kind.ATTENDED, attended_by),
            (Attendance.Kind.PRESENT, present),
        ):
            for role in roles:
                provider = ProviderFactory(practice=practice, role=role)
                Attendance.objects.create(record=record, provider=provider, kind=kind, role=role)
    if not record.voided:
        keys = match_keys(record.fingerprint, child_keys or [(None, None)] * children)
        match_keys_write(practice_id=practice.pk, keys={record.pk: keys})
    return record


def member(practice: Practice, username: str, role: str = Membership.Role.STAFF, **user) -> User:
    account = User.objects.filter(username=username).first() or User.objects.create_user(
        username, password=PASSWORD, **user
    )
    Membership.objects.create(user=account, practice=practice, role=role)
    return account
