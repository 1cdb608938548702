# Receipt retention (ingestion.retention). Safe while the previous release runs: the column is
# nullable (no rewrite; old code never writes it) and the index is built CONCURRENTLY on
# PostgreSQL, so submissions are not blocked while it is made.

import django.db.models.functions.comparison
from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class AddIndexConcurrentlyOnPostgres(AddIndexConcurrently):
    """CREATE INDEX CONCURRENTLY on PostgreSQL; a plain index on the embedded SQLite file."""

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            super().database_forwards(app_label, schema_editor, from_state, to_state)
        else:
            migrations.AddIndex.database_forwards(
                self, app_label, schema_editor, from_state, to_state
            )

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, from_state, to_state)
        else:
            migrations.AddIndex.database_backwards(
                self, app_label, schema_editor, from_state, to_state
            )


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [
        ("ingestion", "0002_reliability"),
    ]

    operations = [
        migrations.AddField(
            model_name="ingestion",
            name="receipt_purged_at",
            field=models.DateTimeField(
                blank=True,
                help_text="When the receipt's per-record outcome was purged.",
                null=True,
            ),
        ),
        AddIndexConcurrentlyOnPostgres(
            model_name="ingestion",
            index=models.Index(
                django.db.models.functions.comparison.Coalesce("completed_at", "failed_at"),
                condition=models.Q(
                    ("receipt_purged_at__isnull", True), ("status__in", ["completed", "failed"])
                ),
                name="receipt_to_purge",
            ),
        ),
    ]
