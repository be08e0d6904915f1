"""Django's ModelBackend, with the signed-in user read by SQL written once (config.rows): the
read every authenticated request makes. Same checks: the user must exist and be active, and
django.contrib.auth still verifies the session's hash against the password afterwards."""

from django.contrib.auth import backends, get_user_model

from config import rows


class ModelBackend(backends.ModelBackend):
    def get_user(self, user_id):
        try:
            user = rows.fetch_one(get_user_model(), "t.id = %s", [int(user_id)])
        except (TypeError, ValueError):
            return None
        return user if user is not None and self.user_can_authenticate(user) else None
