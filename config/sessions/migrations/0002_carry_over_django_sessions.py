"""The sessions alive in django_session, copied into the fast path's table with their user's id,
so switching to it (this deploy) signs nobody out. Same encoding: both stores sign their data
with the same salt (SessionBase.key_salt names the class, `SessionStore`, in both)."""

from django.db import migrations
from django.utils import timezone

BATCH = 1000


def user_id_of(session_data: str):
    from django.contrib.sessions.backends.db import SessionStore

    value = SessionStore().decode(session_data).get("_auth_user_id")
    return int(value) if value is not None and str(value).isdigit() else None


def carry_over(apps, schema_editor):
    DjangoSession = apps.get_model("sessions", "Session")
    UserSession = apps.get_model("fast_sessions", "UserSession")
    alive = DjangoSession.objects.filter(expire_date__gt=timezone.now()).exclude(
        session_key__in=UserSession.objects.values("session_key")
    )
    copies = (
        UserSession(
            session_key=s.session_key,
            session_data=s.session_data,
            expire_date=s.expire_date,
            user_id=user_id_of(s.session_data),
        )
        for s in alive.iterator(chunk_size=BATCH)
    )
    UserSession.objects.bulk_create(copies, batch_size=BATCH)


class Migration(migrations.Migration):
    dependencies = [("fast_sessions", "0001_initial"), ("sessions", "0001_initial")]

    operations = [migrations.RunPython(carry_over, migrations.RunPython.noop)]
