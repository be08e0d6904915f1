from django.apps import AppConfig


class SessionsConfig(AppConfig):
    """The fast path's session table (models.UserSession). An app of its own under config/, the
    layer every app builds on, so the session store and the auth backend import no app."""

    name = "config.sessions"
    label = "fast_sessions"  # "sessions" is django.contrib.sessions'
    default_auto_field = "django.db.models.BigAutoField"
