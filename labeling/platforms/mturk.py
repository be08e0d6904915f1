"""Amazon Mechanical Turk through boto3: a HIT is an ExternalQuestion that opens our HIT page.

The sandbox is the default; pass sandbox=False (setting MTURK_SANDBOX=False) to spend real money.
boto3 is imported lazily, inside `make_client`, the single point tests patch: no test touches
the network. Credentials come from boto3's usual chain (environment, ~/.aws), never from here.
"""

from xml.etree import ElementTree
from xml.sax.saxutils import escape

from labeling.models import HIT
from labeling.platforms.base import ExternalResult, PlatformError

SANDBOX_ENDPOINT = "https://mturk-requester-sandbox.us-east-1.amazonaws.com"
REGION = "us-east-1"
FRAME_HEIGHT = 800
LIFETIME_SECONDS = 7 * 24 * 3600
AUTO_APPROVAL_SECONDS = 3 * 24 * 3600
_ANSWER_NS = "{http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2005-10-01/QuestionFormAnswers.xsd}"


def make_client(sandbox: bool = True):
    import boto3

    options = {"region_name": REGION}
    if sandbox:
        options["endpoint_url"] = SANDBOX_ENDPOINT
    return boto3.client("mturk", **options)


def external_question(url: str, frame_height: int = FRAME_HEIGHT) -> str:
    return (
        '<ExternalQuestion xmlns="http://mechanicalturk.amazonaws.com/'
        'AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd">'
        f"<ExternalURL>{escape(url)}</ExternalURL><FrameHeight>{frame_height}</FrameHeight></ExternalQuestion>"
    )


def parse_answers(answer_xml: str) -> dict[str, str]:
    """The fields posted back to MTurk's externalSubmit, from its QuestionFormAnswers XML."""
    if not answer_xml:
        return {}
    try:
        root = ElementTree.fromstring(answer_xml)
    except ElementTree.ParseError as error:
        raise PlatformError(f"MTurk answer is not XML: {error}") from error
    answers = {}
    for node in root.iter(f"{_ANSWER_NS}Answer"):
        key = node.findtext(f"{_ANSWER_NS}QuestionIdentifier") or ""
        answers[key] = node.findtext(f"{_ANSWER_NS}FreeText") or ""
    return answers


class MTurkPlatform:
    name = "mturk"

    def __init__(self, client=None, *, sandbox: bool = True) -> None:
        self.sandbox = sandbox
        self._client = client

    @property
    def client(self):
        if self._client is None:
            self._client = make_client(self.sandbox)
        return self._client

    def publish_hit(self, hit: HIT, url: str) -> str:
        campaign = hit.campaign
        response = self.client.create_hit(
            Title=f"Label the emotion of short movie dialogues ({campaign.name})"[:128],
            Description="Read short dialogues from films and choose the emotion or intent of the last line.",
            Keywords="emotion, dialogue, labeling, movies",
            Reward=f"{campaign.reward:.2f}",
            MaxAssignments=hit.required_workers,
            LifetimeInSeconds=LIFETIME_SECONDS,
            AssignmentDurationInSeconds=campaign.time_limit_minutes * 60,
            AutoApprovalDelayInSeconds=AUTO_APPROVAL_SECONDS,
            Question=external_question(url),
            RequesterAnnotation=f"hit:{hit.pk}",
        )
        return response["HIT"]["HITId"]

    def fetch_results(self, hit: HIT) -> list[ExternalResult]:
        if not hit.external_id:
            raise PlatformError(f"HIT {hit.pk} is not published")
        results, token = [], None
        while True:
            page = self.client.list_assignments_for_hit(
                HITId=hit.external_id,
                AssignmentStatuses=["Submitted", "Approved", "Rejected"],
                MaxResults=100,
                **({"NextToken": token} if token else {}),
            )
            results += [
                ExternalResult(
                    a["AssignmentId"], a["WorkerId"], a["AssignmentStatus"], parse_answers(a.get("Answer", ""))
                )
                for a in page.get("Assignments", [])
            ]
            token = page.get("NextToken")
            if not token:
                return results

    def approve(self, result: ExternalResult) -> None:
        self.client.approve_assignment(AssignmentId=result.assignment_id)
