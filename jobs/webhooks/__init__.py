"""Outgoing webhooks: a researcher's endpoints hear of events (a HIT submitted, a campaign filled
or completed, work waiting for adjudication, a job's end, a platform sync error) as signed JSON
POSTs, delivered by workers with retries (docs/webhooks.md).

    signing     the pure HMAC-SHA256 signature and its check
    models      endpoints, events (one per occurrence), deliveries, attempts
    endpoints   the one writer of endpoints; their secrets; the URL check (SSRF)
    events      emit / record: what each state change's writer calls
    delivery    one attempt per Celery task, back-off, the periodic sweep, replay
    views, api  the researcher's pages and the REST API
"""
