"""The engine SESSION_ENGINE names on a site without Redis. Its store lives with its model
(config.sessions.models): the two name each other, and one module keeps them from an import circle."""

from config.sessions.models import SessionStore

__all__ = ["SessionStore"]
