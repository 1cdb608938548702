from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.utils import unquote
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import UserChangeForm
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.functional import cached_property
from django.utils.html import format_html

from keys.admin import KEY_ACTIONS, ApiKeyInline, KeyEventInline, KeyManagementMixin
from registry.admin_filters import PracticeFilter
from registry.dates import day, when
from registry.members.admin import InlineMembershipChangesRecorded, MembershipChangesRecorded
from registry.models import Attendance, Membership, Practice, Record, ReviewDecision
from registry.navigation import is_review_queue, review_queue_url
from registry.review import ReviewError, record_keep, record_merge, record_void
from registry.selectors import (
    may_review,
    practices_reviewed_by,
    record_resemblance,
    record_resembles,
    records_compared_with,
    records_resembling,
    records_reviewable_by,
    review_decisions_for,
    review_queue_size,
)
from registry.services import practice_set_sandbox, sandbox_change_problem


class MembershipInline(admin.StackedInline):
    """Stacked: each field keeps its label (a tabular row's inputs have none of their own)."""

    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


class PracticeForm(forms.ModelForm):
    class Meta:
        model = Practice
        fields = ["slug", "name", "sandbox"]

    def clean_sandbox(self) -> bool:
        """A practice changes kind only while it holds nothing (registry.services)."""
        sandbox = bool(self.cleaned_data["sandbox"])
        stored = self.instance
        if stored.pk is not None and sandbox != stored.sandbox:
            problem = sandbox_change_problem(stored)
            if problem:
                raise forms.ValidationError(problem)
        return sandbox


@admin.register(Practice)
class PracticeAdmin(InlineMembershipChangesRecorded, KeyManagementMixin, admin.ModelAdmin):
    form = PracticeForm
    list_display = ["slug", "name", "sandbox", "created_at"]
    list_filter = ["sandbox"]
    search_fields = ["slug", "name"]
    inlines = [MembershipInline, ApiKeyInline, KeyEventInline]
    actions = KEY_ACTIONS

    def save_model(self, request: HttpRequest, obj: Practice, form: Any, change: bool) -> None:
        """A change of kind goes through the service, which checks again under the lock."""
        wanted = obj.sandbox
        if not change or "sandbox" not in form.changed_data:
            super().save_model(request, obj, form, change)
            return
        obj.sandbox = not wanted
        super().save_model(request, obj, form, change)
        try:
            practice_set_sandbox(practice=obj, sandbox=wanted)
        except ValidationError as error:
            self.message_user(request, error.messages[0], messages.ERROR)


class AccountChangeForm(UserChangeForm):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Django names a hint for the password's read-only widget that its fieldset template
        # never writes (the widget has no id for a label): the widget says it all itself.
        self.fields["password"].help_text = ""


class AccountAdmin(UserAdmin):
    """Django's user admin, with sign-in moments shown rather than edited, groups and
    permissions as plain lists (the two-pane widget's icons carry ARIA their role forbids),
    and every hint it names on the page."""

    form = AccountChangeForm
    readonly_fields = ["last_login", "date_joined"]
    filter_horizontal = ()


admin.site.unregister(User)
admin.site.register(User, AccountAdmin)


@admin.register(Membership)
class MembershipAdmin(MembershipChangesRecorded, admin.ModelAdmin):
    list_display = ["user", "practice_label", "role", "created_at"]
    list_filter = ["role", PracticeFilter]
    list_select_related = ["user", "practice"]
    search_fields = ["user__username", "practice__slug"]
    autocomplete_fields = ["user", "practice"]

    @admin.display(description="practice", ordering="practice__name")
    def practice_label(self, membership: Membership) -> str:
        return membership.practice.label


# --- Duplicate review (registry.review) -------------------------------------------------------
#
# Who sees what is decided by reviewer memberships, not by Django model permissions: a model
# permission cannot say "only St Mary's records". A user with ``is_staff`` (which
# ``addmember --role reviewer`` grants) enters the admin and sees exactly the records of the
# practices they review; superusers see and review every practice's records. Record data is
# never edited here; the only changes are the review decisions, each confirmed on a page of
# its own before it is taken.

REVIEW_ACTIONS: dict[str, str] = {
    ReviewDecision.Action.KEEP: "Keep (not a duplicate)",
    ReviewDecision.Action.VOID: "Void",
    ReviewDecision.Action.MERGE: "Merge",
}
CONFIRMED = "confirmed"
MAX_SELECTED = 500  # records per list action; each is its own locked transaction
BLANK = "\N{EN DASH}"  # an unknown or empty value


class SurvivorField(forms.ModelChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        return f"{obj.external_record_id} (version {obj.version}, received {_when(obj.created_at)})"


class ReviewForm(forms.Form):
    """The confirmation step of a decision: an optional note, and for a merge the survivor."""

    note = forms.CharField(
        required=False,
        max_length=1000,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text="Why, for whoever reads the record's history (no patient details).",
    )

    def __init__(self, *args: Any, survivors: QuerySet[Record] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        if survivors is not None:
            self.fields["survivor"] = SurvivorField(
                queryset=survivors,
                widget=forms.RadioSelect,
                empty_label=None,
                label="Survivor",
                help_text="The record that stays on file; this one is voided and points at it.",
            )
            self.order_fields(["survivor", "note"])


class ReviewPracticeFilter(admin.SimpleListFilter):
    """By practice, offering only the practices the user reviews (never naming others)."""

    title = "practice"
    parameter_name = "practice"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        practices = practices_reviewed_by(user=request.user).order_by("slug")
        return [(p.slug, p.name or p.slug) for p in practices]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value():
            return queryset.filter(practice__slug=self.value())
        return queryset


class CappedPaginator(Paginator):
    """Counts at most ``CAP`` + 1 rows: a list page never counts a million records.

    The count runs over ``LIMIT CAP + 1`` of the filtered query, so it costs the same
    whatever the size of the table; past the cap, the list says "more than" and pages
    stop at the cap (narrow the list with a filter or a search to go further).
    """

    CAP = 10_000

    @cached_property
    def count(self) -> int:
        rows = self.object_list
        if isinstance(rows, QuerySet):
            rows = rows.order_by()  # counting needs no order: LIMIT then stops early
        first_rows = rows[: self.CAP + 1]
        counted = first_rows.count() if isinstance(first_rows, QuerySet) else len(first_rows)
        return min(counted, self.CAP + 1)

    @property
    def capped(self) -> bool:
        return self.count > self.CAP


class ResemblesFilter(admin.SimpleListFilter):
    """``?resembles=<record id>``: every record resembling one, linked from its page.

    In the sidebar only while it is in use (the admin applies only the filters it shows);
    the record page shows the 20 most relevant and links here for the rest.
    """

    title = "resembling record"
    parameter_name = "resembles"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        value = self.value()
        return [(value, "the record in view")] if value else []

    def has_output(self) -> bool:
        return bool(self.value())

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        if not value:
            return queryset
        if not _is_uuid(value):
            return queryset.none()
        return queryset & records_resembling(record_id=uuid.UUID(value))


@admin.register(Record)
class RecordAdmin(admin.ModelAdmin):
    change_form_template = "admin/registry/record/change_form.html"
    change_list_template = "admin/registry/record/change_list.html"
    list_display = [
        "chart_number",
        "practice_label",
        "birth_year",
        "flagged",
        "voided_state",
        "received",
    ]
    list_display_links = ["chart_number"]
    list_filter = [
        ReviewPracticeFilter,
        "created_at",
        "suspected_duplicate",
        "voided",
        ResemblesFilter,
    ]
    list_select_related = ["practice"]
    search_fields = ["external_record_id"]
    search_help_text = "Exact chart number."
    paginator = CappedPaginator
    ordering = ["-created_at", "id"]
    show_full_result_count = False  # a count of every record, on every page, is not worth it
    list_per_page = 50  # rendering rows is most of a list page's time
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "practice_name",
                    "chart_number",
                    "state",
                    "version",
                    "merged_into",
                    "received",
                    "last_changed",
                ]
            },
        )
    ]
    readonly_fields = ["practice_name", "chart_number", "state", "received", "last_changed"]
    actions = ["keep_selected", "void_selected"]

    # -- who may do what ---------------------------------------------------------------------

    def get_queryset(self, request: HttpRequest) -> QuerySet[Record]:
        reviewable = super().get_queryset(request) & records_reviewable_by(user=request.user)
        return reviewable.select_related("practice")

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self.has_review_permission(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is None:
            return self.has_review_permission(request)
        return may_review(user=request.user, practice_id=obj.practice_id)

    def has_review_permission(self, request: HttpRequest) -> bool:
        return practices_reviewed_by(user=request.user).exists()

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # record data comes from the sender; reviewers decide, never edit

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Record], search_term: str
    ) -> tuple[QuerySet[Record], bool]:
        """The chart number exactly as sent (case and all), so the index answers it."""
        term = search_term.strip()
        return (queryset.filter(external_record_id=term) if term else queryset), False

    # -- columns -------------------------------------------------------------------------------

    @admin.display(description="practice")
    def practice_name(self, record: Record) -> str:
        """The name (and short code): never a link to the practice's admin page, closed to
        reviewers."""
        practice = record.practice
        return f"{practice.name} ({practice.slug})" if practice.name else practice.slug

    @admin.display(description="practice", ordering="practice__name")
    def practice_label(self, record: Record) -> str:
        return record.practice.label

    @admin.display(description="chart number", ordering="external_record_id")
    def chart_number(self, record: Record) -> str:
        return record.external_record_id

    @admin.display(description="state")
    def state(self, record: Record) -> str:
        return record_state(record)

    # States in words: a tick or a cross would say "good" or "bad", which these are not.
    @admin.display(description="review", ordering="suspected_duplicate")
    def flagged(self, record: Record) -> str:
        if not record.suspected_duplicate:
            return "Not flagged"
        return format_html('<span class="state state--flagged">{}</span>', "Suspected duplicate")

    @admin.display(description="voided", ordering="voided")
    def voided_state(self, record: Record) -> str:
        if not record.voided:
            return "Not voided"
        return format_html('<span class="state state--voided">{}</span>', "Voided")

    @admin.display(description="received", ordering="created_at")
    def received(self, record: Record) -> str:
        return _when(record.created_at)

    @admin.display(description="last changed")
    def last_changed(self, record: Record) -> str:
        return _when(record.updated_at)

    # -- the list, and the review queue -------------------------------------------------------

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        queue = is_review_queue(request.GET)
        extra_context = (extra_context or {}) | {
            "is_review_queue": queue,
            "review_queue_url": review_queue_url(),
            "review_queue_size": review_queue_size(user=request.user),
        }
        if queue:
            extra_context["title"] = "Review queue: suspected duplicates awaiting a decision"
        return super().changelist_view(request, extra_context)

    # -- the record page -----------------------------------------------------------------------

    def get_urls(self) -> list[URLPattern]:
        review = path(
            "<path:object_id>/review/<str:action>/",
            self.admin_site.admin_view(self.review_view),
            name="registry_record_review",
        )
        return [review, *super().get_urls()]

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        record = self.get_object(request, unquote(object_id))
        if record is not None:
            resemblance = record_resemblance(record=record)
            compared = records_compared_with(
                record=record, user=request.user, resemblance=resemblance
            )
            extra_context = (extra_context or {}) | {
                "resemblance": resemblance,
                "resembling_url": reverse("admin:registry_record_changelist")
                + f"?resembles={record.pk}",
                "subtitle": f"Chart {record.external_record_id} of {record.practice.label}, "
                f"version {record.version}",
                "comparison": comparison_table(compared),
                "decisions": review_decisions_for(record=record),
                "history": record.versions.order_by("-created_at", "-id")[:20],
                "can_review": self.has_review_permission(request),
            }
        return super().change_view(request, object_id, form_url, extra_context)

    def review_view(self, request: HttpRequest, object_id: str, action: str) -> HttpResponse:
        """A decision on one record: a confirmation page (GET), then the decision (POST)."""
        record = self.get_object(request, unquote(object_id))
        if record is None or action not in REVIEW_ACTIONS:
            raise Http404("No such record or decision.")
        if not self.has_review_permission(request):
            raise PermissionDenied
        survivors = None
        if action == ReviewDecision.Action.MERGE:
            chosen = request.POST.get("survivor") or request.GET.get("survivor")
            survivors = merge_candidates(record, request.user, chosen=chosen)
        data = request.POST if request.method == "POST" else None
        form = ReviewForm(data, survivors=survivors, initial=_survivor_choice(request, survivors))
        if form.is_valid():
            self._decide(request, record, action, form.cleaned_data)
            return redirect("admin:registry_record_change", record.pk)
        context = {
            **self.admin_site.each_context(request),
            "title": f"{REVIEW_ACTIONS[action]}: record {record.external_record_id}",
            "opts": self.model._meta,
            "original": record,
            "action": action,
            "form": form,
            "has_survivors": survivors is None or survivors.exists(),
        }
        return TemplateResponse(request, "admin/registry/record/review_confirm.html", context)

    def _decide(
        self, request: HttpRequest, record: Record, action: str, data: dict[str, Any]
    ) -> None:
        by, note = _user(request), data["note"]
        try:
            if action == ReviewDecision.Action.KEEP:
                record_keep(record=record, by=by, note=note)
                done = "kept: no longer flagged as a suspected duplicate"
            elif action == ReviewDecision.Action.VOID:
                record_void(record=record, by=by, note=note)
                done = "voided"
            else:
                survivor = data["survivor"]
                record_merge(record=record, survivor=survivor, by=by, note=note)
                done = f"merged into {survivor.external_record_id} and voided"
        except ReviewError as error:
            self.message_user(request, str(error), messages.ERROR)
        else:
            self.message_user(request, f"Record {record.external_record_id} {done}.")

    # -- the list's actions --------------------------------------------------------------------

    @admin.action(description="Keep the selected records (clear the flag)", permissions=["review"])
    def keep_selected(self, request: HttpRequest, queryset: QuerySet[Record]) -> Any:
        return self._bulk(request, queryset, ReviewDecision.Action.KEEP)

    @admin.action(description="Void the selected records", permissions=["review"])
    def void_selected(self, request: HttpRequest, queryset: QuerySet[Record]) -> Any:
        return self._bulk(request, queryset, ReviewDecision.Action.VOID)

    def _bulk(
        self, request: HttpRequest, queryset: QuerySet[Record], action: str
    ) -> HttpResponse | None:
        if queryset.count() > MAX_SELECTED:
            self.message_user(
                request,
                f"Select at most {MAX_SELECTED} records at a time: each is decided on its own.",
                messages.ERROR,
            )
            return None
        records = list(queryset.select_related("practice").order_by("created_at", "id"))
        form = ReviewForm(request.POST if CONFIRMED in request.POST else None)
        if not form.is_valid():
            context = {
                **self.admin_site.each_context(request),
                "title": f"{REVIEW_ACTIONS[action]}: {len(records)} records",
                "opts": self.model._meta,
                "action": action,
                "records": records,
                "form": form,
                "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
                "confirmed": CONFIRMED,
            }
            return TemplateResponse(
                request, "admin/registry/record/review_selected_confirm.html", context
            )
        service = record_keep if action == ReviewDecision.Action.KEEP else record_void
        done = 0
        for record in records:
            try:
                service(record=record, by=_user(request), note=form.cleaned_data["note"])
                done += 1
            except ReviewError as error:
                self.message_user(request, str(error), messages.WARNING)
        verb = "kept" if action == ReviewDecision.Action.KEEP else "voided"
        self.message_user(request, f"{done} of {len(records)} records {verb}.")
        return None


def record_state(record: Record) -> str:
    if record.voided:
        return "Merged (voided)" if record.merged_into_id else "Voided"
    if record.suspected_duplicate:
        return "Suspected duplicate"
    return "On file"


def merge_candidates(record: Record, user: Any, chosen: str | None = None) -> QuerySet[Record]:
    """The records ``record`` may be merged into: the live ones shown beside it, and the
    one chosen (from the full list of resembling records) when it does resemble it."""
    candidates = set(record_resemblance(record=record).record_ids)
    if chosen and _is_uuid(chosen) and uuid.UUID(chosen) not in candidates:
        other = records_reviewable_by(user=user).filter(pk=chosen).first()
        if other is not None and record_resembles(record=record, other=other):
            candidates.add(other.pk)
    return (
        records_reviewable_by(user=user)
        .filter(pk__in=candidates, voided=False, practice_id=record.practice_id)
        .order_by("created_at", "id")
    )


def _survivor_choice(request: HttpRequest, survivors: QuerySet[Record] | None) -> dict[str, Any]:
    """The survivor chosen on the record page, or the only one there is."""
    chosen = request.GET.get("survivor")
    if survivors is None:
        return {}
    if not chosen:
        only = list(survivors[:2])
        return {"survivor": only[0]} if len(only) == 1 else {}
    return {"survivor": survivors.filter(pk__in=[chosen]).first() if _is_uuid(chosen) else None}


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _user(request: HttpRequest) -> User:
    if not isinstance(request.user, User):
        raise PermissionDenied
    return request.user


# --- The side-by-side comparison ---------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    text: str
    differs: bool = False


@dataclass(frozen=True)
class Row:
    label: str
    cells: list[Cell]


@dataclass(frozen=True)
class Comparison:
    records: list[Record]
    rows: list[Row]


def comparison_table(records: list[Record]) -> Comparison:
    """Masked facts only, one column per record, the record under review first.

    A cell that differs from the first column is marked, so differences stand out.
    """
    first = records[0] if records else None
    children = max((len(r.children.all()) for r in records), default=0)
    facts: list[tuple[str, Any]] = [
        ("State", record_state),
        ("Version", lambda r: str(r.version)),
        ("Received", lambda r: _when(r.created_at)),
        ("Last changed", lambda r: _when(r.updated_at)),
        (
            "Same mother and birth date",
            lambda r: (
                BLANK
                if r is first
                else (
                    "Yes"
                    if first and r.fingerprint and r.fingerprint == first.fingerprint
                    else "No"
                )
            ),
        ),
        ("Birth year", lambda r: _text(r.birth_year)),
        ("Mother's age", lambda r: _text(r.mother_age_years)),
        ("Postal code (first 3)", lambda r: _text(r.mother_postal_prefix)),
        ("Consent", _consent),
        ("IG version", lambda r: _text(r.ig_version)),
        *[(f"Child {i + 1}", _child_at(i)) for i in range(children)],
        ("Attended by", _attendants(Attendance.Kind.ATTENDED)),
        ("Present", _attendants(Attendance.Kind.PRESENT)),
        (
            "Transfers",
            lambda r: ", ".join(t.get_kind_display() for t in r.transfers.all()) or BLANK,
        ),
    ]
    rows = []
    for label, fact in facts:
        texts = [fact(r) for r in records]
        compare = label not in {"Received", "Last changed", "Same mother and birth date"}
        rows.append(
            Row(
                label,
                [Cell(t, differs=compare and i > 0 and t != texts[0]) for i, t in enumerate(texts)],
            )
        )
    return Comparison(records, rows)


def _text(value: Any) -> str:
    return BLANK if value is None or value == "" else str(value)


def _when(value: datetime | None) -> str:
    return when(value)


def _consent(record: Record) -> str:
    decision = "Granted" if record.consent_granted else "Not granted"
    if record.consent_datetime:
        return f"{decision} ({day(record.consent_datetime)})"
    return decision


def _child_at(index: int) -> Any:
    def describe(record: Record) -> str:
        children = list(record.children.all())
        if index >= len(children):
            return BLANK
        child = children[index]
        weeks = child.gestational_age_weeks
        parts = [
            child.get_outcome_display(),
            child.sex or "sex unknown",
            f"{child.birth_weight_grams} g" if child.birth_weight_grams else "weight unknown",
            f"{weeks} w {child.gestational_age_days or 0} d"
            if weeks is not None
            else "age unknown",
            _apgar(child),
        ]
        return ", ".join(parts)

    return describe


def _apgar(child: Any) -> str:
    """``Apgar 1 min 8, 5 min 9, 10 min 7``: each score says which minute it is."""
    scores = ((1, child.apgar_1), (5, child.apgar_5), (10, child.apgar_10))
    return "Apgar " + ", ".join(f"{minute} min {_text(score)}" for minute, score in scores)


def _attendants(kind: str) -> Any:
    def describe(record: Record) -> str:
        names = [
            f"{a.provider} ({a.provider.get_role_display().lower()})"
            for a in record.attendances.all()
            if a.kind == kind
        ]
        return ", ".join(names) or BLANK

    return describe
