# The outbox: when a delivery is due, who is sending it, and a stable id for receivers to drop duplicates.

import uuid

import django.utils.timezone
from django.db import migrations, models


def give_each_delivery_its_own_uuid(apps, schema_editor):
    # AddField computes a callable default once for all existing rows; ids must differ per delivery
    Delivery = apps.get_model("alerts", "Delivery")
    for delivery in Delivery.objects.filter(uuid__isnull=True).only("id"):
        Delivery.objects.filter(id=delivery.id).update(uuid=uuid.uuid4())


class Migration(migrations.Migration):

    dependencies = [
        ('alerts', '0002_alert_rules'),
    ]

    operations = [
        migrations.AddField(
            model_name='delivery',
            name='claimed_until',
            field=models.DateTimeField(blank=True, help_text='lease of the sender trying it now; others wait until it ends', null=True),
        ),
        # existing rows get the migration's time: pending ones are due at once, and the sweeper sends them
        migrations.AddField(
            model_name='delivery',
            name='next_attempt_at',
            field=models.DateTimeField(default=django.utils.timezone.now, help_text='when a pending delivery is due'),
        ),
        migrations.AddField(
            model_name='delivery',
            name='uuid',
            field=models.UUIDField(editable=False, null=True, verbose_name='delivery id'),
        ),
        migrations.RunPython(give_each_delivery_its_own_uuid, migrations.RunPython.noop, elidable=True),
        migrations.AlterField(
            model_name='delivery',
            name='uuid',
            field=models.UUIDField(default=uuid.uuid4, editable=False, help_text="sent as X-LatencyObs-Delivery and the JSON body's id; the same on every try", unique=True, verbose_name='delivery id'),
        ),
        migrations.AddIndex(
            model_name='delivery',
            index=models.Index(condition=models.Q(('status', 'pending')), fields=['next_attempt_at'], name='alerts_delivery_due_idx'),
        ),
    ]
