import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

# the URLconf, the reverse maps and the templates, before the first request rather than in it
from config.web.warmup import warm_up  # noqa: E402 (needs the settings get_wsgi_application set up)

warm_up()
