"""The client package lives in client/ (its own pyproject.toml; `make install` installs it
editable); the tests import it from there too, so a venv made before it existed still runs them."""

import sys

from tests.client.server import CLIENT_DIR

if str(CLIENT_DIR) not in sys.path:
    sys.path.insert(0, str(CLIENT_DIR))
