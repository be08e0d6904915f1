"""Django's MessageMiddleware, with the message store made on first use.

Django's makes the store (a cookie store and a session store behind it) for every request and
asks it after the response whether anything must be written; most requests (every annotator's
Next, autosave and claim) never touch messages. Here the store is a lazy object: a request that
adds or shows a message (messages.add_message, the `messages` template variable) makes it as
Django would, and the response is then handled exactly as Django's middleware handles it; a
request that never looks skips both.
"""

from django.contrib.messages import middleware
from django.contrib.messages.storage import default_storage
from django.utils.functional import SimpleLazyObject, empty


class MessageMiddleware(middleware.MessageMiddleware):
    def process_request(self, request):
        request._messages = SimpleLazyObject(lambda: default_storage(request))

    def process_response(self, request, response):
        messages = getattr(request, "_messages", None)
        if isinstance(messages, SimpleLazyObject) and messages._wrapped is empty:
            return response  # never made: nothing added, nothing shown, nothing to keep
        return super().process_response(request, response)
