"""The label taxonomy: 32 emotions, 8 empathetic response intents and Neutral.

Pure data, no Django import: the seed migration, the annotator tutorial, the weak labeler and the
exporters all read it from here. Descriptions and tutorial examples are written for this project.
"""

import unicodedata
from dataclasses import dataclass

EMOTION = "emotion"
INTENT = "intent"
NEUTRAL = "neutral"


@dataclass(frozen=True)
class LabelSpec:
    name: str
    kind: str
    description: str
    examples: tuple[str, str]


TAXONOMY: tuple[LabelSpec, ...] = (
    LabelSpec(
        "Prepared",
        EMOTION,
        "Feeling ready for something that is coming.",
        (
            "I packed the car last night, so we can leave the minute you're up.",
            "I've rehearsed my speech ten times. Let them ask anything.",
        ),
    ),
    LabelSpec(
        "Anticipating",
        EMOTION,
        "Looking forward to or waiting for something expected.",
        (
            "Only two more days until the results come out.",
            "I keep checking the window. The bus should be here any second.",
        ),
    ),
    LabelSpec(
        "Hopeful",
        EMOTION,
        "Believing that something good may happen.",
        (
            "Maybe this time the doctors will find what's wrong.",
            "If the rain holds off, we might still make the harbour tonight.",
        ),
    ),
    LabelSpec(
        "Proud",
        EMOTION,
        "Pleased with one's own or someone close's achievement.",
        (
            "My little brother built that boat with his own hands.",
            "I finished the marathon. Me, who couldn't run a mile last spring!",
        ),
    ),
    LabelSpec(
        "Excited",
        EMOTION,
        "Eager and enthusiastic, full of energy about something.",
        ("We're going to the coast tomorrow! I can't sit still!", "They said yes! The band wants us on stage tonight!"),
    ),
    LabelSpec(
        "Joyful",
        EMOTION,
        "Feeling great happiness or delight.",
        ("Look at her dance! I haven't laughed like this in years.", "This is the best birthday anyone has ever had."),
    ),
    LabelSpec(
        "Content",
        EMOTION,
        "Quietly satisfied with how things are.",
        (
            "A warm fire, a good book. I don't need anything else.",
            "The garden's done for the year and I'm happy with it.",
        ),
    ),
    LabelSpec(
        "Caring",
        EMOTION,
        "Showing concern and kindness for someone's wellbeing.",
        ("Put my coat on, you're shivering.", "Did you eat anything today? Let me make you some soup."),
    ),
    LabelSpec(
        "Grateful",
        EMOTION,
        "Thankful for something received or done.",
        ("You drove all night to get me. I owe you so much.", "Thank you for staying with Mom while I was away."),
    ),
    LabelSpec(
        "Trusting",
        EMOTION,
        "Relying on someone's honesty or ability.",
        (
            "I'll hold the rope. I know you won't let me fall.",
            "Take the keys. I know you'll bring the car back in one piece.",
        ),
    ),
    LabelSpec(
        "Confident",
        EMOTION,
        "Sure of oneself or of an outcome.",
        ("Relax, I've flown through worse storms than this.", "We'll win this case. The evidence is on our side."),
    ),
    LabelSpec(
        "Faithful",
        EMOTION,
        "Loyal, steadfast, or holding to a belief.",
        (
            "I gave you my word and I'll stand by you, whatever happens.",
            "Every night I pray, and every night I believe he'll come home.",
        ),
    ),
    LabelSpec(
        "Impressed",
        EMOTION,
        "Admiring someone's skill or something remarkable.",
        (
            "You fixed the engine with a paperclip? That's incredible.",
            "I've never heard anyone play the violin like that.",
        ),
    ),
    LabelSpec(
        "Surprised",
        EMOTION,
        "Caught off guard by something unexpected.",
        ("You're here? I thought you were in Paris!", "Wait, the store closed? It was open yesterday."),
    ),
    LabelSpec(
        "Terrified",
        EMOTION,
        "Overcome by extreme fear.",
        (
            "Something is scratching at the door. Please, don't open it!",
            "Get us out of here, the whole floor is collapsing!",
        ),
    ),
    LabelSpec(
        "Afraid",
        EMOTION,
        "Feeling fear of danger or harm.",
        ("I don't want to go down into that cellar.", "What if they find us before morning?"),
    ),
    LabelSpec(
        "Apprehensive",
        EMOTION,
        "Uneasy that something bad might happen.",
        ("I have a bad feeling about tomorrow's meeting.", "Are you sure this bridge will hold the truck?"),
    ),
    LabelSpec(
        "Anxious",
        EMOTION,
        "Worried and tense about an uncertain outcome.",
        (
            "He should have called an hour ago. Why isn't he answering?",
            "I can't sleep. I keep thinking about the exam.",
        ),
    ),
    LabelSpec(
        "Embarrassed",
        EMOTION,
        "Self-conscious after an awkward moment.",
        (
            "I called the teacher 'Mom' in front of the whole class.",
            "Don't look at me, I spilled wine all over the host.",
        ),
    ),
    LabelSpec(
        "Ashamed",
        EMOTION,
        "Feeling bad about one's own wrong or foolish conduct.",
        (
            "I lied to you, and I can't even look you in the eye.",
            "I should never have taken that money from her purse.",
        ),
    ),
    LabelSpec(
        "Devastated",
        EMOTION,
        "Overwhelmed by shock and grief.",
        ("She's gone. I'll never hear her voice again.", "Everything we built burned down in one night."),
    ),
    LabelSpec(
        "Sad",
        EMOTION,
        "Feeling sorrow or unhappiness.",
        ("The house feels so empty since the kids moved out.", "I miss the way things used to be between us."),
    ),
    LabelSpec(
        "Disappointed",
        EMOTION,
        "Let down because hopes or expectations were not met.",
        ("I waited all evening and you never showed up.", "After all that work, they gave the part to someone else."),
    ),
    LabelSpec(
        "Lonely",
        EMOTION,
        "Sad from being alone or without company.",
        ("Nobody's called me in weeks.", "I eat dinner alone every night and talk to the radio."),
    ),
    LabelSpec(
        "Sentimental",
        EMOTION,
        "Tender feelings stirred by personal memories or keepsakes.",
        ("This is the ribbon from the first present you gave me.", "I kept every letter Dad wrote me from the army."),
    ),
    LabelSpec(
        "Nostalgic",
        EMOTION,
        "Longing fondly for the past.",
        (
            "Remember the summers at the lake when we were kids?",
            "They don't make songs like the ones we danced to back then.",
        ),
    ),
    LabelSpec(
        "Guilty",
        EMOTION,
        "Feeling responsible for a wrong or a harm done.",
        ("It's my fault he was on that road. I asked him to come.", "I should have been there when she needed me."),
    ),
    LabelSpec(
        "Disgusted",
        EMOTION,
        "Repelled by something offensive or revolting.",
        ("There are maggots in the bread. Throw it out!", "How can you laugh at what he did to those people?"),
    ),
    LabelSpec(
        "Furious",
        EMOTION,
        "Extremely angry, full of rage.",
        ("You sold my father's watch? Get out of my house!", "I swear, if he touches her again I'll tear him apart!"),
    ),
    LabelSpec(
        "Angry",
        EMOTION,
        "Strongly displeased or hostile.",
        ("Why did you read my letters without asking?", "Stop lying to me! I know where you were."),
    ),
    LabelSpec(
        "Annoyed",
        EMOTION,
        "Mildly irritated.",
        ("Can you stop tapping that pen? I'm trying to think.", "The neighbours' dog barked all night again."),
    ),
    LabelSpec(
        "Jealous",
        EMOTION,
        "Resentful of someone's advantages or of a rival.",
        ("Why does she get the corner office? I've been here longer.", "I saw the way you smiled at him."),
    ),
    LabelSpec(
        "Agreeing",
        INTENT,
        "Expressing agreement with what was said.",
        ("You're right, we should leave before dark.", "Exactly. That's what I was thinking too."),
    ),
    LabelSpec(
        "Acknowledging",
        INTENT,
        "Showing that what was said was heard and understood.",
        ("I see. So the train is delayed until noon.", "Okay, got it. Left at the church, then straight on."),
    ),
    LabelSpec(
        "Encouraging",
        INTENT,
        "Giving support or confidence to keep going.",
        ("Go on, you can do this. One more step.", "Don't give up now, you're so close to the finish."),
    ),
    LabelSpec(
        "Consoling",
        INTENT,
        "Comforting someone in distress or grief.",
        ("Come here. It's going to be all right, I promise.", "It wasn't your fault. Nobody could have stopped it."),
    ),
    LabelSpec(
        "Sympathizing",
        INTENT,
        "Sharing in or expressing understanding of someone's feelings.",
        ("That must have been so hard for you.", "I'm sorry you had to go through that alone."),
    ),
    LabelSpec(
        "Suggesting",
        INTENT,
        "Proposing an idea or a course of action.",
        ("Why don't we take the back road instead?", "Maybe you should talk to her before she leaves."),
    ),
    LabelSpec(
        "Questioning",
        INTENT,
        "Asking for information or clarification.",
        ("Where were you on the night of the fire?", "What did the doctor say about the scan?"),
    ),
    LabelSpec(
        "Wishing",
        INTENT,
        "Expressing a wish or good wishes for someone.",
        ("Good luck out there. Come back safe.", "I hope all your dreams come true, sweetheart."),
    ),
    LabelSpec(
        "Neutral",
        NEUTRAL,
        "No particular emotion or intent; plain information or small talk.",
        ("The meeting is on the third floor.", "I'll take the blue folder and you take the red one."),
    ),
)

LABEL_NAMES: tuple[str, ...] = tuple(spec.name for spec in TAXONOMY)
EMOTIONS: tuple[str, ...] = tuple(spec.name for spec in TAXONOMY if spec.kind == EMOTION)
INTENTS: tuple[str, ...] = tuple(spec.name for spec in TAXONOMY if spec.kind == INTENT)
_BY_KEY = {spec.name.lower(): spec for spec in TAXONOMY}


def normalise_label_name(text: str) -> str:
    """Fold width and compatibility forms (NFKC: "Ｓａｄ" is "Sad"), case and white space, so a
    typed 'other' answer can be matched to a known label."""
    return " ".join(unicodedata.normalize("NFKC", text).split()).lower()


def canonical_label(text: str) -> str | None:
    """The taxonomy's spelling of `text` when it names one of the 41 labels (case and spaces aside)."""
    spec = _BY_KEY.get(normalise_label_name(text))
    return spec.name if spec else None
