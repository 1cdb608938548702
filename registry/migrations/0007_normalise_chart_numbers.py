"""Chart numbers already stored are normalised as new ones are (NFC, no format characters).

A stored chart number whose normalised spelling another record of the practice already
holds is left as it is (the two are then told apart by a reviewer); every other one is
rewritten in place. The function is copied here, as migrations must not change with code.
"""

import unicodedata

from django.db import migrations


def normalise(value):
    if value.isascii():
        return value.strip()
    visible = "".join(c for c in value if unicodedata.category(c) != "Cf")
    return unicodedata.normalize("NFC", visible).strip()


def forwards(apps, schema_editor):
    Record = apps.get_model("registry", "Record")
    rows = Record.objects.exclude(external_record_id__regex=r"^[ -~]*$")
    for record_id, practice_id, chart in rows.values_list(
        "id", "practice_id", "external_record_id"
    ).iterator():
        normal = normalise(chart)
        if not normal or normal == chart:
            continue
        taken = Record.objects.filter(practice_id=practice_id, external_record_id=normal)
        if not taken.exists():
            Record.objects.filter(id=record_id).update(external_record_id=normal)


class Migration(migrations.Migration):
    # After the counts (0006), so a rewritten chart number keeps its counts and match keys.
    dependencies = [("registry", "0006_birth_counts")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
