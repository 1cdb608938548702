"""Duplicate matching through match keys instead of pairwise links (registry.matching).

Carried over: every record, its suspected-duplicate flag, its review decisions and its
history are left exactly as they are. Each live record with a fingerprint gets one match
key per stored child, built from what is on file:

* ``time`` is NULL: times were never stored, so an old record matches any time. Every pair
  of records the old rule linked (same fingerprint) therefore still resembles each other,
  and no flag loses the resemblance that supports it.
* ``birth_order`` is the stored order when it can only have been declared or come from a
  multi-child document (a record with several children, or an order other than 1); the
  lone child of a single-child record (order 1, declared or not) gets NULL, which matches
  any order.

Then the pairwise ``DuplicateLink`` table is dropped.
"""

import django.db.models.deletion
from django.db import migrations, models

DIGEST_HEX_DIGITS = 15  # registry.matching.DIGEST_HEX_DIGITS, frozen here

BUILD_KEYS_POSTGRESQL = """
INSERT INTO registry_matchkey (record_id, practice_id, fingerprint, time, birth_order)
SELECT DISTINCT r.id, r.practice_id,
       ('x' || lpad(substr(r.fingerprint, 1, 15), 16, '0'))::bit(64)::bigint,
       NULL::bigint,
       CASE WHEN c.birth_order IS NULL THEN NULL
            WHEN c.birth_order = 1 AND NOT EXISTS (
                 SELECT 1 FROM registry_child o WHERE o.record_id = r.id AND o.id <> c.id)
            THEN NULL
            ELSE c.birth_order END
  FROM registry_record r
  LEFT JOIN registry_child c ON c.record_id = r.id
 WHERE NOT r.voided AND r.fingerprint ~ '^[0-9a-f]{15}'
"""


def build_keys(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(BUILD_KEYS_POSTGRESQL)
        return
    build_keys_portable(apps)


def build_keys_portable(apps):
    """The same, row by row, for the embedded SQLite default (small by nature)."""
    Record = apps.get_model("registry", "Record")
    Child = apps.get_model("registry", "Child")
    MatchKey = apps.get_model("registry", "MatchKey")
    orders = {}
    for record_id, order in Child.objects.values_list("record_id", "birth_order"):
        orders.setdefault(record_id, []).append(order)
    keys = []
    live = Record.objects.filter(voided=False, fingerprint__isnull=False)
    for record_id, practice_id, fingerprint in live.values_list("id", "practice_id", "fingerprint"):
        try:
            digest = int(fingerprint[:DIGEST_HEX_DIGITS], 16)
        except ValueError:
            continue
        found = orders.get(record_id, [None])
        single = len(found) == 1
        for order in sorted(set(found), key=lambda o: o or 0):
            kept = None if order is None or (single and order == 1) else order
            keys.append(
                MatchKey(
                    record_id=record_id,
                    practice_id=practice_id,
                    fingerprint=digest,
                    time=None,
                    birth_order=kept,
                )
            )
    MatchKey.objects.bulk_create(keys, batch_size=1000)


class Migration(migrations.Migration):
    dependencies = [
        ("registry", "0003_review_and_statistics"),
    ]

    operations = [
        migrations.CreateModel(
            name="MatchKey",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("fingerprint", models.BigIntegerField()),
                ("time", models.BigIntegerField(blank=True, null=True)),
                ("birth_order", models.SmallIntegerField(blank=True, null=True)),
                (
                    "practice",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="registry.practice",
                    ),
                ),
                (
                    "record",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="match_keys",
                        to="registry.record",
                    ),
                ),
            ],
        ),
        migrations.RunPython(build_keys, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name="matchkey",
            index=models.Index(
                fields=["practice", "fingerprint", "time", "birth_order"],
                include=("record",),
                name="matchkey_by_time",
            ),
        ),
        migrations.AddIndex(
            model_name="matchkey",
            index=models.Index(
                fields=["practice", "fingerprint", "birth_order"],
                include=("record",),
                name="matchkey_by_order",
            ),
        ),
        migrations.RemoveField(model_name="record", name="resembles"),
        migrations.DeleteModel(name="DuplicateLink"),
        migrations.RemoveIndex(model_name="record", name="record_live_fingerprint"),
    ]
