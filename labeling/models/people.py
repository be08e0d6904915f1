"""Who works: a crowd worker, a site account's or a platform id's (with its pending landings)."""

from django.conf import settings
from django.db import models


class Worker(models.Model):
    SITE, MTURK, PROLIFIC = "site", "mturk", "prolific"
    PLATFORM_CHOICES = [(SITE, "This site"), (MTURK, "Amazon Mechanical Turk"), (PROLIFIC, "Prolific")]
    ACTIVE, BLOCKED = "active", "blocked"
    STATUS_CHOICES = [(ACTIVE, "Active"), (BLOCKED, "Blocked")]

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True, related_name="worker"
    )
    platform = models.CharField(max_length=16, choices=PLATFORM_CHOICES, default=SITE)
    external_id = models.CharField(max_length=128, help_text="platform worker id, or the username")
    country = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=8, choices=STATUS_CHOICES, default=ACTIVE)
    created_at = models.DateTimeField(auto_now_add=True)
    # where a platform worker first landed from: what the landing rate limits count (the address,
    # and its block: an IPv6 address's /PLATFORM_IPV6_PREFIX network, an IPv4 address itself)
    signup_ip = models.GenericIPAddressField(null=True, blank=True)
    signup_network = models.CharField(max_length=64, blank=True)
    # an IPv6 address's /48 (one site, whose /64s share a cap too); an IPv4 address itself
    signup_site_network = models.CharField(max_length=64, blank=True)
    signup_campaign = models.ForeignKey("Campaign", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    # A platform landing is a pending identity of its own: the platform's id of the work it came
    # with (MTurk assignmentId, Prolific SESSION_ID) is its key, since the worker id alone proves
    # nothing. "" for the proven worker of a platform id (and for site workers): the row that
    # pending identities are merged into once the platform confirms their submission.
    landing_key = models.CharField(max_length=64, blank=True)
    merged_into = models.ForeignKey("self", on_delete=models.SET_NULL, null=True, blank=True, related_name="landings")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["platform", "external_id", "landing_key"], name="worker_unique_platform_id_landing"
            )
        ]
        indexes = [
            models.Index(fields=["signup_ip", "created_at"]),
            models.Index(fields=["signup_network", "created_at"]),
            models.Index(fields=["signup_site_network", "created_at"]),
            models.Index(fields=["signup_campaign", "created_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.external_id} ({self.platform})"

    @property
    def is_blocked(self) -> bool:
        return self.status == self.BLOCKED

    @property
    def is_pending_identity(self) -> bool:
        """A platform landing not yet proven by a confirmed submission (see landing_key)."""
        return bool(self.landing_key) and self.merged_into_id is None


class ProlificSessionCheck(models.Model):
    """What Prolific answered about one SESSION_ID a landing brought (labeling.platforms.prolific_checks,
    its one writer): asked by a job, never in the web request, so every process (web workers, the
    Celery worker) reads the same answer. One row per session id: a reload or a second tab waits
    on the same check. The answer is Prolific's, not a verdict: each landing is judged against it
    (labeling.platforms.landing.session_refusal), so a landing with someone else's session id cannot spoil
    the owner's. `refusal` is the verdict for the landing that asked first, counted toward its
    address's cap of unconfirmed sessions."""

    PENDING, ANSWERED, FAILED = "pending", "answered", "failed"
    STATUS_CHOICES = [(PENDING, "Waiting for Prolific"), (ANSWERED, "Answered"), (FAILED, "Prolific not reached")]

    session_id = models.CharField(max_length=64, unique=True)
    status = models.CharField(max_length=8, choices=STATUS_CHOICES, default=PENDING)
    # the landing that asked first: its participant, campaign and address blocks
    participant = models.CharField(max_length=64)
    campaign = models.ForeignKey("Campaign", on_delete=models.CASCADE, related_name="+")
    network = models.CharField(max_length=64)
    site_network = models.CharField(max_length=64)
    # Prolific's answer: found False for an unknown session (its 404)
    found = models.BooleanField(default=False)
    study_id = models.CharField(max_length=64, blank=True)
    submission_participant = models.CharField(max_length=64, blank=True)
    submission_status = models.CharField(max_length=32, blank=True)
    refusal = models.CharField(max_length=120, blank=True, help_text="why the first landing was refused; '' proven")
    error = models.CharField(max_length=300, blank=True, help_text="why Prolific could not be asked (failed)")
    created_at = models.DateTimeField(auto_now_add=True)
    queued_at = models.DateTimeField(help_text="when its job was last queued")
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["network", "created_at"], name="prolific_check_network"),
            models.Index(fields=["site_network", "created_at"], name="prolific_check_site"),
        ]

    def __str__(self) -> str:
        return f"Prolific session {self.session_id}: {self.status}"

    @property
    def submission(self) -> dict | None:
        """Prolific's answer in the shape labeling.platforms.landing.session_refusal reads; None: no such session."""
        if not self.found:
            return None
        return {"study_id": self.study_id, "participant": self.submission_participant, "status": self.submission_status}
