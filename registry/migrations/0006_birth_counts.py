"""Counts kept as records change (BirthCount), and the attendant's role kept per attendance.

Fills both for the records already on file."""

import django.db.models.deletion
from django.db import migrations, models

# Frozen copies of the definitions as they stood when the counts were introduced
# (registry/counts.py RECOUNT_SQL); a migration must not change when that module does.
FILL_ROLES = """
UPDATE registry_attendance SET role = (
    SELECT p.role FROM registry_provider p WHERE p.id = registry_attendance.provider_id
)
"""

FILL_COUNTS = """
INSERT INTO registry_birthcount (
    practice_id, birth_year, "group", births, suspected_duplicates, consent_granted,
    live_births, fetal_deaths, low_birth_weight, known_birth_weight, preterm,
    known_gestational_age, apgar5_below_7, known_apgar5
)
WITH live AS (
    SELECT id, practice_id, COALESCE(birth_year, 0) AS birth_year,
           CASE WHEN suspected_duplicate THEN 1 ELSE 0 END AS flagged,
           CASE WHEN consent_granted THEN 1 ELSE 0 END AS consent
    FROM registry_record WHERE NOT voided
),
kids AS (
    SELECT c.record_id,
        SUM(CASE WHEN c.outcome = 'live_birth' THEN 1 ELSE 0 END) AS live_births,
        SUM(CASE WHEN c.outcome = 'fetal_death' THEN 1 ELSE 0 END) AS fetal_deaths,
        SUM(CASE WHEN c.outcome = 'live_birth' AND c.birth_weight_grams < 2500 THEN 1 ELSE 0 END) AS low_birth_weight,
        SUM(CASE WHEN c.outcome = 'live_birth' AND c.birth_weight_grams IS NOT NULL THEN 1 ELSE 0 END) AS known_birth_weight,
        SUM(CASE WHEN c.outcome = 'live_birth' AND c.gestational_age_weeks < 37 THEN 1 ELSE 0 END) AS preterm,
        SUM(CASE WHEN c.outcome = 'live_birth' AND c.gestational_age_weeks IS NOT NULL THEN 1 ELSE 0 END) AS known_gestational_age,
        SUM(CASE WHEN c.outcome = 'live_birth' AND c.apgar_5 < 7 THEN 1 ELSE 0 END) AS apgar5_below_7,
        SUM(CASE WHEN c.outcome = 'live_birth' AND c.apgar_5 IS NOT NULL THEN 1 ELSE 0 END) AS known_apgar5
    FROM registry_child c JOIN live ON live.id = c.record_id
    GROUP BY c.record_id
),
groups AS (
    SELECT id AS record_id, 'all' AS grp FROM live
    UNION ALL
    SELECT DISTINCT a.record_id, a.role
    FROM registry_attendance a JOIN live ON live.id = a.record_id
    WHERE a.kind = 'attended' AND a.role IN ('midwife', 'doula', 'nurse', 'assistant')
)
SELECT live.practice_id, live.birth_year, groups.grp,
    COUNT(*), SUM(live.flagged), SUM(live.consent),
    COALESCE(SUM(kids.live_births), 0), COALESCE(SUM(kids.fetal_deaths), 0),
    COALESCE(SUM(kids.low_birth_weight), 0), COALESCE(SUM(kids.known_birth_weight), 0),
    COALESCE(SUM(kids.preterm), 0), COALESCE(SUM(kids.known_gestational_age), 0),
    COALESCE(SUM(kids.apgar5_below_7), 0), COALESCE(SUM(kids.known_apgar5), 0)
FROM live
JOIN groups ON groups.record_id = live.id
LEFT JOIN kids ON kids.record_id = live.id
GROUP BY live.practice_id, live.birth_year, groups.grp
"""


class Migration(migrations.Migration):
    dependencies = [
        ("registry", "0005_admin_at_scale"),
    ]

    operations = [
        migrations.AddField(
            model_name="attendance",
            name="role",
            field=models.CharField(
                choices=[
                    ("midwife", "Midwife"),
                    ("doula", "Doula"),
                    ("nurse", "Nurse"),
                    ("assistant", "Assistant"),
                    ("other", "Other"),
                ],
                default="other",
                max_length=20,
            ),
        ),
        migrations.CreateModel(
            name="BirthCount",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "birth_year",
                    models.PositiveSmallIntegerField(help_text="0 when the birth year is unknown."),
                ),
                ("group", models.CharField(help_text='"all" or an attendant role.', max_length=20)),
                ("births", models.IntegerField(default=0)),
                ("suspected_duplicates", models.IntegerField(default=0)),
                ("consent_granted", models.IntegerField(default=0)),
                ("live_births", models.IntegerField(default=0)),
                ("fetal_deaths", models.IntegerField(default=0)),
                ("low_birth_weight", models.IntegerField(default=0)),
                ("known_birth_weight", models.IntegerField(default=0)),
                ("preterm", models.IntegerField(default=0)),
                ("known_gestational_age", models.IntegerField(default=0)),
                ("apgar5_below_7", models.IntegerField(default=0)),
                ("known_apgar5", models.IntegerField(default=0)),
                (
                    "practice",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="registry.practice",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("practice", "birth_year", "group"), name="birth_count_once_per_cell"
                    )
                ],
            },
        ),
        migrations.RunSQL(FILL_ROLES, migrations.RunSQL.noop),
        migrations.RunSQL(FILL_COUNTS, migrations.RunSQL.noop),
    ]
