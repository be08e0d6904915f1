"""The `hide_server_paths` template filter, a builtin of every template (settings.TEMPLATES)."""

import sys
from pathlib import Path

from django import template
from django.conf import settings

from config.web.server_paths import hide_server_paths as _hide

register = template.Library()


def _roots() -> list[tuple[str, str]]:
    return [
        (str(settings.MEDIA_ROOT), "MEDIA_ROOT"),
        (str(settings.STATIC_ROOT), "STATIC_ROOT"),
        (str(settings.BASE_DIR), "<project>"),
        (sys.prefix, "<python>"),
        (sys.base_prefix, "<python>"),
        (str(Path.home()), "~"),
    ]


@register.filter
def hide_server_paths(value) -> str:
    return _hide(str(value), _roots())
