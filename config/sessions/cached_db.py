from django.contrib.sessions.backends import cached_db

from config.sessions.models import UserSession
from config.sessions.store import ReadOnceMixin


class SessionStore(ReadOnceMixin, cached_db.SessionStore):
    @classmethod
    def get_model_class(cls):
        return UserSession
