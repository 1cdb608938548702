"""Fill the registry office's counts for what is already on file, so that an upgraded
registry's console is right from the start: ReceivedCount from the live records (by the UTC
day each was first received), SubmissionCount from the finished ingestions (by the UTC day
each was received; a failed one's courses not accepted count as rejected).

Safe while the previous release runs, for the schema (it only fills the two tables of 0011);
but what the old code stores or finishes after it ran is not counted: stop the workers first,
or run ``manage.py recount_statistics`` once the new code runs."""

from django.db import migrations

# Frozen copies of the definitions as they stand (registry/statistics/counts.py recount_sql
# by day, registry/statistics/submissions.py _RECOUNT); a migration must not change when those
# modules do. {day} is the database's UTC day of a timestamp column.
DAY_OF = {"postgresql": "({} AT TIME ZONE 'UTC')::date", "sqlite": "date({})"}

FILL_RECEIVED = """
INSERT INTO registry_receivedcount (
    practice_id, day, births, suspected_duplicates, consent_granted,
    live_births, fetal_deaths, low_birth_weight, known_birth_weight, preterm,
    known_gestational_age, apgar5_below_7, known_apgar5, live_births_attended,
    live_births_consent_decided, with_warning, timeliness_known, received_within_5_days,
    received_within_10_days
)
WITH live AS (
    SELECT id, practice_id, {day} AS day,
           CASE WHEN suspected_duplicate THEN 1 ELSE 0 END AS flagged,
           CASE WHEN consent_granted THEN 1 ELSE 0 END AS consent,
           CASE WHEN consent_decided THEN 1 ELSE 0 END AS decided,
           CASE WHEN drew_warning THEN 1 ELSE 0 END AS warned,
           CASE WHEN timeliness IS NOT NULL THEN 1 ELSE 0 END AS timely_known,
           CASE WHEN timeliness IN ('days_0_5') THEN 1 ELSE 0 END AS within_5,
           CASE WHEN timeliness IN ('days_0_5', 'days_6_10') THEN 1 ELSE 0 END AS within_10
    FROM registry_record
    WHERE NOT voided
),
attended AS (
    SELECT DISTINCT a.record_id
    FROM registry_attendance a JOIN live ON live.id = a.record_id
    WHERE a.kind = 'attended'
),
kids AS (
    SELECT c.record_id,
        SUM(CASE WHEN c.outcome = 'live_birth' THEN 1 ELSE 0 END) AS live_births,
        SUM(CASE WHEN c.outcome = 'fetal_death' THEN 1 ELSE 0 END) AS fetal_deaths,
        SUM(CASE WHEN c.outcome = 'live_birth'
                  AND c.birth_weight_grams < 2500 THEN 1 ELSE 0 END) AS low_birth_weight,
        SUM(CASE WHEN c.outcome = 'live_birth'
                  AND c.birth_weight_grams IS NOT NULL THEN 1 ELSE 0 END) AS known_birth_weight,
        SUM(CASE WHEN c.outcome = 'live_birth'
                  AND c.gestational_age_weeks < 37 THEN 1 ELSE 0 END) AS preterm,
        SUM(CASE WHEN c.outcome = 'live_birth'
                  AND c.gestational_age_weeks IS NOT NULL THEN 1 ELSE 0 END)
            AS known_gestational_age,
        SUM(CASE WHEN c.outcome = 'live_birth'
                  AND c.apgar_5 < 7 THEN 1 ELSE 0 END) AS apgar5_below_7,
        SUM(CASE WHEN c.outcome = 'live_birth'
                  AND c.apgar_5 IS NOT NULL THEN 1 ELSE 0 END) AS known_apgar5
    FROM registry_child c JOIN live ON live.id = c.record_id
    GROUP BY c.record_id
)
SELECT live.practice_id, live.day,
    COUNT(*), SUM(live.flagged), SUM(live.consent),
    COALESCE(SUM(kids.live_births), 0), COALESCE(SUM(kids.fetal_deaths), 0),
    COALESCE(SUM(kids.low_birth_weight), 0), COALESCE(SUM(kids.known_birth_weight), 0),
    COALESCE(SUM(kids.preterm), 0), COALESCE(SUM(kids.known_gestational_age), 0),
    COALESCE(SUM(kids.apgar5_below_7), 0), COALESCE(SUM(kids.known_apgar5), 0),
    COALESCE(SUM(CASE WHEN attended.record_id IS NOT NULL THEN kids.live_births END), 0),
    COALESCE(SUM(kids.live_births * live.decided), 0),
    SUM(live.warned), SUM(live.timely_known), SUM(live.within_5), SUM(live.within_10)
FROM live
LEFT JOIN kids ON kids.record_id = live.id
LEFT JOIN attended ON attended.record_id = live.id
GROUP BY live.practice_id, live.day
"""

FILL_SUBMISSIONS = """
INSERT INTO registry_submissioncount (
    practice_id, day, ingestions, courses, accepted, rejected, last_received_at
)
SELECT practice_id, {day}, COUNT(*), SUM(entry_count), SUM(accepted_count),
       SUM(CASE WHEN status = 'failed'
                THEN CASE WHEN entry_count > accepted_count
                          THEN entry_count - accepted_count ELSE 0 END
                ELSE rejected_count END),
       MAX(queued_at)
FROM ingestion_ingestion
WHERE status IN ('completed', 'failed')
GROUP BY practice_id, {day}
"""


def fill(apps, schema_editor):
    connection = schema_editor.connection
    day = DAY_OF.get(connection.vendor, DAY_OF["postgresql"])
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM registry_receivedcount")
        cursor.execute("DELETE FROM registry_submissioncount")
        cursor.execute(FILL_RECEIVED.format(day=day.format("created_at")))
        cursor.execute(FILL_SUBMISSIONS.format(day=day.format("queued_at")))


class Migration(migrations.Migration):
    dependencies = [
        ("registry", "0011_office_counts"),
        # The recount of what practices sent reads the ingestions (their columns as of 0001).
        ("ingestion", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
