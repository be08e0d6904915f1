"""The demo corpus's raw material, written for this project: per label, lines that lead into a
scene and last lines that carry the label; slots ({name}, {place}, {thing}, {when}) vary them.

Every line is one sentence (the punctuation segmenter makes each sentence a turn), at most about
80 characters, so no cleaning rule drops it. Pure data, no Django import.
"""

NAMES = ("Mara", "Tom", "Ines", "Walter", "Nadia", "Felix", "June", "Omar", "Lena", "Rafael", "Greta", "Sam")
PLACES = ("the harbour", "the station", "the old mill", "the market", "the hospital", "the farm", "the bridge")
THINGS = ("the letter", "the car", "the ring", "the map", "the keys", "the photograph", "the boat")
WHENS = ("tonight", "tomorrow", "on Friday", "next week", "in the morning", "after the storm")

# Lead-ins that fit any scene: the first turn of a longer dialogue.
GENERIC_OPENERS = (
    "Hey, do you have a minute?",
    "{name}, wait, I need to tell you something.",
    "You came back from {place} early.",
    "Sit down, the kettle is on.",
    "So, what happened at {place}?",
    "I didn't expect to see you here.",
)

# label -> (openers leading into the scene, last lines carrying the label)
SCENES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "Prepared": (
        ("Are you ready for {when}?", "Did you pack for the trip?"),
        (
            "The bags are by the door and the tank is full, we can leave {when}.",
            "I've checked {thing} twice, everything is ready to go.",
            "I practised every answer, let them ask me anything.",
            "The food, the candles and the water are stocked, the storm can come.",
        ),
    ),
    "Anticipating": (
        ("When does {name} arrive?", "Any news about the results?"),
        (
            "Only two more days until {name} comes home.",
            "I keep looking out of the window, the bus should come any minute.",
            "The results will be posted {when} and I'm counting the hours.",
            "Next week the new job finally starts.",
        ),
    ),
    "Hopeful": (
        ("Do you think it will work out?", "What did the doctor say?"),
        (
            "Maybe this time the doctors will find what's wrong with {name}.",
            "If the rain holds off, we might still reach {place} {when}.",
            "I think things could get better for us soon.",
            "Perhaps {name} will write back after all.",
        ),
    ),
    "Proud": (
        ("Who built that?", "How did the race go?"),
        (
            "My little brother built {thing} with his own hands.",
            "I finished the whole race, me, who couldn't run a mile last spring!",
            "{name} got the top mark in the whole school, that's my girl!",
            "We restored the old mill ourselves, every single beam.",
        ),
    ),
    "Excited": (
        ("Guess what they told me!", "Is it true about the concert?"),
        (
            "We're going to the coast {when}, I can't sit still!",
            "They said yes, the band wants us on stage tonight!",
            "I got the tickets, we're really going to see them live!",
            "The new puppy arrives {when}, I can hardly wait!",
        ),
    ),
    "Joyful": (
        ("Look at them all dancing.", "How was the party?"),
        (
            "I haven't laughed like this in years, what a wonderful night!",
            "This is the happiest day of my life!",
            "Everyone is here together, I could sing!",
            "The sun is out and {name} is home, what a day!",
        ),
    ),
    "Content": (
        ("How is life at {place}?", "Do you miss the city?"),
        (
            "A warm cup of tea and a good book, I need nothing more.",
            "The garden is quiet and the kids are asleep, life is good.",
            "I have a small house and kind neighbours, I'm satisfied.",
            "We don't have much, but it's enough for us.",
        ),
    ),
    "Caring": (
        ("I'm fine, really.", "I haven't eaten since yesterday."),
        (
            "Put my coat on, you're shivering.",
            "Let me make you some soup before you go back out.",
            "You look exhausted, {name}, lie down for a while.",
            "Call me when you get home, so I know you're safe.",
        ),
    ),
    "Grateful": (
        ("I brought your things from {place}.", "It was nothing, really."),
        (
            "You drove all night to get me, I owe you so much.",
            "Thank you for staying with Mom while I was away.",
            "I'll never forget what you did for us, {name}.",
            "Thanks for fixing {thing}, you saved my whole week.",
        ),
    ),
    "Trusting": (
        ("Are you sure about him?", "Who should hold {thing}?"),
        (
            "I'd trust {name} with my life.",
            "Give {thing} to her, she has never let me down.",
            "If you say the bridge is safe, I believe you.",
            "I know you'll keep my secret.",
        ),
    ),
    "Confident": (
        ("What if we lose?", "The storm is getting worse."),
        (
            "Relax, I've sailed through worse storms than this.",
            "We'll win this case, the evidence is on our side.",
            "Don't worry, I know exactly what I'm doing.",
            "I'll pass that test easily, I know the material.",
        ),
    ),
    "Faithful": (
        ("Everyone else has given up on him.", "Why do you still wait for her?"),
        (
            "I promised to stand by {name}, and I always will.",
            "I've been loyal to this family for thirty years and I won't stop now.",
            "Whatever they say, I still believe in you.",
            "I'll wait at {place} every day until she comes back.",
        ),
    ),
    "Impressed": (
        ("Did you see her play?", "He fixed the engine in an hour."),
        (
            "Wow, I've never seen anyone play the violin like that.",
            "You repaired {thing} in an hour, that's amazing work.",
            "{name} speaks five languages, I'm truly impressed.",
            "That was the most beautiful speech I have ever heard.",
        ),
    ),
    "Surprised": (
        ("Hello, it's been a while.", "Guess who's at the door."),
        (
            "You're here, I thought you were in Paris!",
            "The shop closed already, but it was open yesterday!",
            "{name} is getting married, since when?",
            "I had no idea you could cook!",
        ),
    ),
    "Terrified": (
        ("Did you hear that noise?", "Someone is outside."),
        (
            "Please, don't make me go down into that cellar!",
            "Oh God, someone is in the house, I can hear him on the stairs!",
            "I can't breathe, the water is rising too fast!",
            "Help me, please, I don't want to die here!",
        ),
    ),
    "Afraid": (
        ("We have to cross the bridge.", "The dogs are loose again."),
        (
            "What if they find us before morning?",
            "I'm scared of those dogs, let's go another way.",
            "I don't want to walk past {place} in the dark.",
            "That man frightens me, please stay close.",
        ),
    ),
    "Apprehensive": (
        ("The meeting is {when}.", "They want to see you in the office."),
        (
            "I have a bad feeling about the meeting {when}.",
            "Are you sure this bridge will hold the truck?",
            "Something about this deal makes me uneasy.",
            "I'm not sure we should trust the new manager yet.",
        ),
    ),
    "Anxious": (
        ("Have you heard from the hospital?", "Why do you keep checking your phone?"),
        (
            "I can't stop worrying about {name}'s test results.",
            "What if I fail the exam and lose the scholarship?",
            "My hands are shaking, I can't stop thinking about {when}.",
            "I haven't slept for days, waiting for the call.",
        ),
    ),
    "Embarrassed": (
        ("Why is your face so red?", "Everyone saw what happened."),
        (
            "I called my teacher Mom in front of the whole class.",
            "I tripped on stage in front of everyone, I wanted to disappear.",
            "I sang the wrong words at {name}'s wedding.",
            "My phone rang in the middle of the funeral.",
        ),
    ),
    "Ashamed": (
        ("Why did you do it?", "They know about the money."),
        (
            "I lied to my own mother, I can't look her in the eye.",
            "I took money from the till, I'm not proud of it.",
            "I was cruel to {name}, and I'm ashamed of who I was.",
            "I ran away when they needed me, I'm a coward.",
        ),
    ),
    "Devastated": (
        ("I heard the news.", "What did the firemen say?"),
        (
            "She's gone, I'll never hear her voice again.",
            "Everything we built burned down in one night.",
            "They told me {name} didn't survive the crash.",
            "I lost the farm, the house, everything.",
        ),
    ),
    "Sad": (
        ("You look down today.", "Is something wrong?"),
        (
            "The house feels so empty since the kids moved out.",
            "I miss the way things used to be between us.",
            "My old dog died this morning.",
            "It's been a grey and heavy week, {name}.",
        ),
    ),
    "Disappointed": (
        ("Did you get the part?", "How was the dinner?"),
        (
            "I waited all evening and you never showed up.",
            "After all that work, they gave the part to someone else.",
            "I expected more from {name}, honestly.",
            "The trip was cancelled again, I was really looking forward to it.",
        ),
    ),
    "Lonely": (
        ("Do you see your friends much?", "How are the evenings?"),
        (
            "Nobody has called me in weeks.",
            "I eat dinner alone every night and talk to the radio.",
            "Since {name} moved away, I have no one to talk to.",
            "The town is full of people and still I feel alone.",
        ),
    ),
    "Sentimental": (
        ("What's in that box?", "Why do you keep that old thing?"),
        (
            "This is the ribbon from the first present you gave me.",
            "I kept every letter Dad wrote me from the army.",
            "This little shoe was {name}'s when she was a baby.",
            "I still wear the scarf Grandma knitted for me.",
        ),
    ),
    "Nostalgic": (
        ("Remember the summers at {place}?", "This song takes me back."),
        (
            "Those summers at the lake were the best days of our lives.",
            "Back then we had nothing, and we were so happy.",
            "I miss the old cinema where we used to go on Sundays.",
            "We used to ride our bikes to {place} every evening.",
        ),
    ),
    "Guilty": (
        ("It wasn't your fault.", "Why are you blaming yourself?"),
        (
            "It's my fault he was on that road, I asked him to come.",
            "I should have been there when she needed me.",
            "I broke {thing} and let {name} take the blame.",
            "I forgot to lock the gate and the horses ran off.",
        ),
    ),
    "Disgusted": (
        ("Taste this.", "Did you hear what he did?"),
        (
            "There are maggots in the bread, throw it out!",
            "How can you laugh at what he did to those people?",
            "This kitchen smells like something died in it.",
            "Ugh, he spat on the floor right in front of us.",
        ),
    ),
    "Furious": (
        ("I sold the watch.", "He touched her again."),
        (
            "You sold my father's watch, get out of my house!",
            "I swear, if he touches her again I'll tear him apart!",
            "You wrecked {thing} and you dare to laugh at me?",
            "Get out, I never want to see your face again!",
        ),
    ),
    "Angry": (
        ("I read your letters.", "I was with friends."),
        (
            "Why did you read my letters without asking?",
            "Stop lying to me, I know where you were.",
            "You took {thing} without asking, again!",
            "I'm sick of cleaning up after you, {name}.",
        ),
    ),
    "Annoyed": (
        ("Tap, tap, tap.", "The neighbours are at it again."),
        (
            "Can you stop tapping that pen, I'm trying to think.",
            "The neighbours' dog barked all night again.",
            "Ugh, the bus is late for the third time this week.",
            "Please stop humming that song, {name}.",
        ),
    ),
    "Jealous": (
        ("She got the corner office.", "He bought a new car."),
        (
            "Why does she get the corner office when I've been here longer?",
            "I saw the way you smiled at {name}.",
            "Of course his family pays for everything, must be nice.",
            "Everyone always praises my sister, never me.",
        ),
    ),
    "Agreeing": (
        ("We should leave before dark.", "I think we should sell the car."),
        (
            "You're right, we should leave before dark.",
            "Exactly, that's what I was thinking too.",
            "Yes, I agree with you completely.",
            "Fair enough, let's do it your way.",
        ),
    ),
    "Acknowledging": (
        ("The train is delayed until noon.", "Turn left at the church, then straight on."),
        (
            "I see, so the train is delayed until noon.",
            "Okay, got it, left at the church, then straight on.",
            "Right, I'll keep that in mind.",
            "Understood, I'll tell {name}.",
        ),
    ),
    "Encouraging": (
        ("I can't do this.", "My legs are giving up."),
        (
            "Go on, you can do this, one more step.",
            "Don't give up now, you're so close to the finish.",
            "Keep going, {name}, you're doing great.",
            "You've trained for this, you're ready.",
        ),
    ),
    "Consoling": (
        ("I ruined everything.", "He's gone and it's my fault."),
        (
            "Come here, it's going to be all right, I promise.",
            "It wasn't your fault, nobody could have stopped it.",
            "Shh, I'm here now, you're not alone.",
            "Cry as long as you need, I'll stay with you.",
        ),
    ),
    "Sympathizing": (
        ("I spent the night in the waiting room.", "I had to tell them myself."),
        (
            "That must have been so hard for you.",
            "I'm sorry you had to go through that alone.",
            "I know how it feels to lose someone like that.",
            "That sounds exhausting, {name}.",
        ),
    ),
    "Suggesting": (
        ("The main road is blocked.", "I don't know how to talk to her."),
        (
            "Why don't we take the back road instead?",
            "Maybe you should talk to her before she leaves.",
            "How about we meet at {place} {when}?",
            "You could ask {name} to help with {thing}.",
        ),
    ),
    "Questioning": (
        ("There was a fire last night.", "I went to the doctor."),
        (
            "Where were you on the night of the fire?",
            "What did the doctor say about the scan?",
            "Who gave you {thing}?",
            "When did you last see {name}?",
        ),
    ),
    "Wishing": (
        ("I leave for the war {when}.", "It's my exam today."),
        (
            "Good luck with the exam, I'll keep my fingers crossed.",
            "I wish you a safe journey, come back to us.",
            "Happy birthday, {name}, may all your dreams come true.",
            "I hope you find what you're looking for out there.",
        ),
    ),
    "Neutral": (
        ("Where do we meet?", "What time is it?"),
        (
            "The bus leaves at half past seven.",
            "The meeting is in room four, on the second floor.",
            "I put {thing} on the kitchen table.",
            "The market opens at nine on Saturdays.",
        ),
    ),
}

# Last lines that fit two labels: the crowd splits on them (first label is the writer's intent).
AMBIGUOUS: tuple[tuple[str, str, str], ...] = (
    ("Surprised", "Grateful", "You did all this for me, I can't believe it."),
    ("Sad", "Lonely", "Since you left, the evenings are so long."),
    ("Angry", "Annoyed", "You're late again, {name}."),
    ("Afraid", "Anxious", "What if the doctor calls with bad news?"),
    ("Nostalgic", "Sentimental", "I found our old photographs from {place}."),
    ("Devastated", "Sad", "The shop my father built is closing for good."),
    ("Excited", "Joyful", "We won, we actually won!"),
    ("Proud", "Impressed", "Look at {name}, she painted all of that herself."),
    ("Consoling", "Sympathizing", "I'm so sorry, I know how much she meant to you."),
    ("Suggesting", "Questioning", "Shall we take the train instead?"),
    ("Guilty", "Ashamed", "I should never have said those things to you."),
    ("Hopeful", "Anticipating", "Maybe {name} will come home for the holidays."),
    ("Confident", "Prepared", "We've planned for everything, nothing can go wrong."),
    ("Furious", "Angry", "How dare you speak to my mother like that!"),
    ("Caring", "Consoling", "Here, take my blanket and rest a little."),
    ("Neutral", "Acknowledging", "Okay, the keys are on the hook."),
)

# Whole dialogues in other languages: the language filter keeps them out of the English campaign.
FOREIGN: dict[str, tuple[tuple[str, ...], ...]] = {
    "fr": (
        ("Tu viens avec nous ce soir?", "Non, je suis trop fatiguée, je reste à la maison."),
        ("Où as-tu mis les clés de la voiture?", "Elles sont sur la table de la cuisine, comme toujours."),
        ("Je ne comprends pas pourquoi il est parti.", "Il avait peur, c'est tout, laisse-le tranquille."),
    ),
    "es": (
        ("¿Dónde está tu hermano esta noche?", "Está trabajando en el puerto hasta muy tarde."),
        ("No quiero volver a ese pueblo nunca más.", "Lo entiendo, pero tu madre te está esperando allí."),
        ("¡Qué sorpresa verte aquí después de tantos años!", "Yo también me alegro mucho de verte, amigo."),
    ),
    "de": (
        ("Wann fährt der nächste Zug nach Hamburg?", "Ich glaube, er fährt in zwanzig Minuten ab."),
        ("Warum hast du mir nichts davon erzählt?", "Ich wollte dich nicht beunruhigen, es tut mir leid."),
    ),
}

# Subtitle noise the cleaning rules remove (counted per rule in the ingest report).
SOUND_CUES = ("[door slams]", "[thunder rumbling]", "(sighs)", "(laughs softly)", "[phone ringing]", "(SOBBING)")
MUSIC_CUES = ("♪ La la la, under the moon ♪", "♪♪", "♪ Soft piano music ♪")
SPEAKERS = ("MARA:", "TOM:", "DOCTOR:", "OLD MAN:", "INES:")
ADVERTS = ("Subtitles by the Demo Subtitle Team", "Synced and corrected by nobody-at-all")
LEAD_INS = ("Well, ", "Oh, ", "Look, ", "Listen, ", "Honestly, ")
