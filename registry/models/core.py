"""Practices, their members, the masked records they own, and reviewers' decisions on them."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone

SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*\Z"
slug_validator = RegexValidator(
    SLUG_PATTERN,
    "A practice slug is lowercase letters and digits, optionally joined by single hyphens.",
)


class Practice(models.Model):
    """A practice owns its API key, its records and its statistics; nothing crosses over.

    A *sandbox* practice is where an integrator tries things: everything works as for any
    practice, but its keys start ``rgk_test_``, its records count only in its own figures
    (never in the registry's or another practice's benchmarks), and its staff may delete all
    of its data. The flag changes only while the practice has no active key, no records and
    no ingestions (:func:`registry.services.practice_set_sandbox`), so test data never turns
    into registry data, nor real data into something a reset deletes.
    """

    slug = models.CharField(max_length=50, unique=True, validators=[slug_validator])
    name = models.CharField(max_length=200, blank=True)
    sandbox = models.BooleanField(
        default=False,
        help_text="A practice for trying the API: keys start rgk_test_, its records never "
        "count in the registry's figures, and its staff may delete all of its data.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]
        # The registry office (registry.office): sees and manages every practice.
        permissions = [("view_registry", "Registry office: sees and manages every practice")]

    def __str__(self) -> str:
        return self.slug

    @property
    def label(self) -> str:
        """The practice as people read it: its name, or its short code when it has none."""
        return self.name or self.slug


class Membership(models.Model):
    """A Django user's place in a practice. Staff manage the key; reviewers resolve duplicates."""

    class Role(models.TextChoices):
        STAFF = "staff", "Staff"
        REVIEWER = "reviewer", "Reviewer"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    practice = models.ForeignKey(Practice, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.STAFF)
    created_at = models.DateTimeField(auto_now_add=True)
    feedback_mail = models.BooleanField(
        default=True,
        db_default=True,
        help_text="Staff receive the monthly feedback mail unless they opt out.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "practice"], name="one_membership_per_practice")
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.practice} ({self.role})"


class Timeliness(models.TextChoices):
    """Days from the (earliest) birth to the day the registry first received the record."""

    DAYS_0_5 = "days_0_5", "Within 5 days"
    DAYS_6_10 = "days_6_10", "6 to 10 days"
    DAYS_OVER_10 = "days_over_10", "More than 10 days"


class Record(models.Model):
    """One course of care, masked: only what docs/decisions.md ("What is stored") allows.

    The chart number (``external_record_id``) is unique per practice. The row holds the
    current version; every version's values are kept in :class:`RecordVersion`.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # No index of its own: the chart-number constraint and the list indexes lead with it.
    practice = models.ForeignKey(
        Practice, on_delete=models.PROTECT, related_name="records", db_index=False
    )
    external_record_id = models.CharField(max_length=200)
    version = models.PositiveIntegerField(default=1)
    voided = models.BooleanField(default=False)
    voided_at = models.DateTimeField(null=True, blank=True)
    suspected_duplicate = models.BooleanField(default=False)
    merged_into = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="merged_records"
    )
    fingerprint = models.CharField(max_length=64, null=True, blank=True)
    ig_version = models.CharField(max_length=64, null=True, blank=True)
    consent_granted = models.BooleanField(default=False)
    consent_datetime = models.DateTimeField(null=True, blank=True)
    source_updated_at = models.DateTimeField(
        null=True, blank=True, help_text="meta.lastUpdated or timestamp: the stale-update guard."
    )
    birth_year = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Birth year of the earliest child, for year filters."
    )
    mother_age_years = models.PositiveSmallIntegerField(null=True, blank=True)
    mother_postal_prefix = models.CharField(max_length=3, null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    # Data quality (docs/decisions.md, "Data quality"): whether the current version drew a
    # plausibility warning, whether a Consent stated a decision, and how soon after the birth
    # the registry first received the record (a bucket: the birth date is never stored).
    drew_warning = models.BooleanField(default=False, db_default=False)
    consent_decided = models.BooleanField(default=False, db_default=False)
    timeliness = models.CharField(
        max_length=12,
        choices=Timeliness.choices,
        null=True,
        blank=True,
        help_text="Days from the birth to the first receipt; kept from the first version.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["practice", "external_record_id"], name="chart_number_unique_per_practice"
            ),
        ]
        indexes = [
            # Statistics: a practice's live records by birth year, with the record-level
            # figures in the index itself, so they are counted from it alone.
            models.Index(
                fields=["practice", "birth_year"],
                include=["id", "suspected_duplicate", "consent_granted"],
                condition=models.Q(voided=False),
                name="record_live_year",
            ),
            # The admin at a million records: every list is newest first (the admin's
            # ordering, -created_at then id), so each list page is read off an index in
            # order and stops after one page, for one practice's reviewer or for all.
            models.Index(fields=["practice", "-created_at", "id"], name="record_practice_received"),
            models.Index(fields=["-created_at", "id"], name="record_received"),
            # The review queue (?suspected_duplicate__exact=1&voided__exact=0): flagged live
            # records. A decision clears the flag, so these indexes stay small.
            models.Index(
                fields=["practice", "-created_at", "id"],
                condition=models.Q(suspected_duplicate=True, voided=False),
                name="record_review_queue",
            ),
            models.Index(
                fields=["-created_at", "id"],
                condition=models.Q(suspected_duplicate=True, voided=False),
                name="record_review_queue_all",
            ),
            # Search by chart number across practices (a superuser's search).
            models.Index(fields=["external_record_id"], name="record_chart_number"),
        ]

    def __str__(self) -> str:
        # Read by people (breadcrumbs, "Merged into"): the chart number, never a database id.
        return f"{self.external_record_id} v{self.version}"

    @property
    def state(self) -> str:
        """Where the record stands, in the reviewer's words: a merge is a void that names its
        survivor, and a suspected duplicate waits in the review queue until decided."""
        if self.voided:
            return "Merged (voided)" if self.merged_into_id else "Voided"
        if self.suspected_duplicate:
            return "Suspected duplicate"
        return "On file"


class Child(models.Model):
    class Outcome(models.TextChoices):
        LIVE_BIRTH = "live_birth", "Live birth"
        FETAL_DEATH = "fetal_death", "Fetal death"

    record = models.ForeignKey(Record, on_delete=models.CASCADE, related_name="children")
    birth_order = models.PositiveSmallIntegerField()
    outcome = models.CharField(max_length=20, choices=Outcome.choices)
    sex = models.CharField(max_length=10, null=True, blank=True)
    birth_year = models.PositiveSmallIntegerField(null=True, blank=True)
    birth_weight_grams = models.PositiveIntegerField(null=True, blank=True)
    gestational_age_weeks = models.PositiveSmallIntegerField(null=True, blank=True)
    gestational_age_days = models.PositiveSmallIntegerField(null=True, blank=True)
    apgar_1 = models.PositiveSmallIntegerField(null=True, blank=True)
    apgar_5 = models.PositiveSmallIntegerField(null=True, blank=True)
    apgar_10 = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["record", "birth_order"]


# The columns a child row is written with, in this order, by every bulk writer (the pipeline's
# insert, the seed's COPY): the record, then the masked facts of the child.
CHILD_COLUMNS: list[str] = [
    "record_id",
    "birth_order",
    "outcome",
    "sex",
    "birth_year",
    "birth_weight_grams",
    "gestational_age_weeks",
    "gestational_age_days",
    "apgar_1",
    "apgar_5",
    "apgar_10",
]


class Provider(models.Model):
    """A practitioner, unique per practice by stable id. Unlike patients, named (spec 2.3)."""

    class Role(models.TextChoices):
        MIDWIFE = "midwife", "Midwife"
        DOULA = "doula", "Doula"
        NURSE = "nurse", "Nurse"
        ASSISTANT = "assistant", "Assistant"
        OTHER = "other", "Other"

    practice = models.ForeignKey(Practice, on_delete=models.PROTECT, related_name="providers")
    stable_id = models.CharField(max_length=200)
    npi = models.CharField(max_length=20, null=True, blank=True)
    display_name = models.CharField(max_length=200, blank=True)
    credentials = models.CharField(max_length=200, blank=True)
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.OTHER)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["practice", "stable_id"], name="provider_unique_per_practice"
            )
        ]

    def __str__(self) -> str:
        return self.display_name or self.stable_id


class Attendance(models.Model):
    """Who attended the birth (a participant typed ATND) and who was present."""

    class Kind(models.TextChoices):
        ATTENDED = "attended", "Attended"
        PRESENT = "present", "Present"

    record = models.ForeignKey(Record, on_delete=models.CASCADE, related_name="attendances")
    provider = models.ForeignKey(Provider, on_delete=models.PROTECT, related_name="attendances")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    # The provider's role as the course of care gave it, kept with the attendance: the
    # statistics count by it, so a later change of the provider's role changes no past count.
    role = models.CharField(
        max_length=20, choices=Provider.Role.choices, default=Provider.Role.OTHER
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["record", "provider", "kind"], name="attendance_once_per_kind"
            )
        ]


class Transfer(models.Model):
    class Kind(models.TextChoices):
        MATERNAL_TRANSFER_IN = "maternal_transfer_in", "Mother transferred in"
        INFANT_TRANSFER_OUT = "infant_transfer_out", "Infant transferred out"

    record = models.ForeignKey(Record, on_delete=models.CASCADE, related_name="transfers")
    kind = models.CharField(max_length=30, choices=Kind.choices)


class MatchKey(models.Model):
    """One child of a live record as duplicate matching sees it (:mod:`registry.matching`).

    ``fingerprint`` and ``time`` are the first 60 bits of keyed hashes (the birth time is
    never stored in the clear); ``birth_order`` is the declared ``multipleBirthInteger``.
    Only live records have keys: voiding a record deletes them in the same transaction.
    Each probe is an exact seek on one of the two indexes, which carry the record id, so
    matching reads neither the records nor more than one row per probe.
    """

    record = models.ForeignKey(Record, on_delete=models.CASCADE, related_name="match_keys")
    practice = models.ForeignKey(
        Practice, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    fingerprint = models.BigIntegerField()
    time = models.BigIntegerField(null=True, blank=True)
    birth_order = models.SmallIntegerField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(
                fields=["practice", "fingerprint", "time", "birth_order"],
                include=["record"],
                name="matchkey_by_time",
            ),
            models.Index(
                fields=["practice", "fingerprint", "birth_order"],
                include=["record"],
                name="matchkey_by_order",
            ),
        ]


class RecordVersion(models.Model):
    """Each version's masked values, so an amendment never loses what it replaced."""

    class Change(models.TextChoices):
        CREATED = "created", "Created"
        AMENDED = "amended", "Amended"
        VOIDED = "voided", "Voided"
        REVIVED = "revived", "Re-sent after voiding"
        REVIEWED = "reviewed", "Reviewed and kept"

    record = models.ForeignKey(Record, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()
    change = models.CharField(max_length=10, choices=Change.choices)
    values = models.JSONField(help_text="The record's masked values at this version.")
    ingestion_id = models.UUIDField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["record", "created_at", "id"]
        indexes = [models.Index(fields=["record", "version"], name="record_version")]


class ReviewDecision(models.Model):
    """A reviewer's decision on a record: who, when, what, and for a merge, into which record.

    Written by the services in :mod:`registry.review.services` together with the change itself and a
    :class:`RecordVersion` row; never edited afterwards.
    """

    class Action(models.TextChoices):
        KEEP = "keep", "Kept (not a duplicate)"
        VOID = "void", "Voided"
        MERGE = "merge", "Merged"

    record = models.ForeignKey(Record, on_delete=models.CASCADE, related_name="review_decisions")
    action = models.CharField(max_length=10, choices=Action.choices)
    survivor = models.ForeignKey(
        Record,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="For a merge: the record this one now points at.",
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    # Kept as text too, so the decision still says who after a user is deleted.
    decided_by_username = models.CharField(max_length=150)
    decided_at = models.DateTimeField(default=timezone.now)
    record_version = models.PositiveIntegerField(help_text="The record's version when decided.")
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["-decided_at", "-id"]
        indexes = [models.Index(fields=["record", "-decided_at"], name="review_record_at")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(action="merge", survivor__isnull=False)
                | (~models.Q(action="merge") & models.Q(survivor__isnull=True)),
                name="review_survivor_only_for_merge",
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_action_display()} by {self.decided_by_username}"


class RecordCounts(models.Model):
    """The counts kept of a set of live records (COUNT_FIELDS, in that order): what each
    record contributes is :func:`registry.statistics.counts.contribution`'s."""

    births = models.IntegerField(default=0)
    suspected_duplicates = models.IntegerField(default=0)
    consent_granted = models.IntegerField(default=0)
    live_births = models.IntegerField(default=0)
    fetal_deaths = models.IntegerField(default=0)
    low_birth_weight = models.IntegerField(default=0)
    known_birth_weight = models.IntegerField(default=0)
    preterm = models.IntegerField(default=0)
    known_gestational_age = models.IntegerField(default=0)
    apgar5_below_7 = models.IntegerField(default=0)
    known_apgar5 = models.IntegerField(default=0)
    # Data quality (registry.statistics.quality): completeness of the attendant and the
    # consent decision among live births, plausibility, timeliness.
    live_births_attended = models.IntegerField(default=0, db_default=0)
    live_births_consent_decided = models.IntegerField(default=0, db_default=0)
    with_warning = models.IntegerField(default=0, db_default=0)
    timeliness_known = models.IntegerField(default=0, db_default=0)
    received_within_5_days = models.IntegerField(default=0, db_default=0)
    received_within_10_days = models.IntegerField(default=0, db_default=0)

    class Meta:
        abstract = True


class BirthCount(RecordCounts):
    """The statistics' counts of a practice for one birth year and one group, kept current.

    ``group`` is ``all`` (every birth) or an attendant role; ``birth_year`` is the record's
    birth year, 0 when unknown. Each count is the sum of what the practice's live records
    contribute (:func:`registry.statistics.counts.contribution`); every change to a record
    changes these rows in the same transaction (:func:`registry.statistics.counts.counts_kept`),
    so they always equal a recount (``manage.py recount_statistics --check``) and a page never
    counts records.
    """

    ALL = "all"

    practice = models.ForeignKey(Practice, on_delete=models.CASCADE, related_name="+")
    birth_year = models.PositiveSmallIntegerField(help_text="0 when the birth year is unknown.")
    group = models.CharField(max_length=20, help_text='"all" or an attendant role.')

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["practice", "birth_year", "group"], name="birth_count_once_per_cell"
            )
        ]


# The counts a BirthCount row holds, in column order.
COUNT_FIELDS: list[str] = [
    "births",
    "suspected_duplicates",
    "consent_granted",
    "live_births",
    "fetal_deaths",
    "low_birth_weight",
    "known_birth_weight",
    "preterm",
    "known_gestational_age",
    "apgar5_below_7",
    "known_apgar5",
    "live_births_attended",
    "live_births_consent_decided",
    "with_warning",
    "timeliness_known",
    "received_within_5_days",
    "received_within_10_days",
]
