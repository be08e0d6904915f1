"""`python -m config.beat [celery beat options]`: Celery beat with `.env` read as manage.py reads it.

`celery -A config beat` would see only the environment; the Procfile starts beat through here so
every process of `make demo` reads the same `.env` the same way (config/dotenv.py).
"""

import sys

from config.dotenv import load_env_file


def main(argv: list[str]) -> None:
    load_env_file()
    from config.celery import app

    app.start(["beat", *argv])


if __name__ == "__main__":
    main(sys.argv[1:])
