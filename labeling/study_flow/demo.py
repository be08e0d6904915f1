"""The demo campaign's study flow (`manage.py demo_setup` sets it; the tests walk it): a consent,
instructions, three practice items with their explanations and three exit-survey questions, with
the campaign's texts in Arabic too, so the demo shows every step and a researcher's translation.
The practice dialogues are written for the demo, never taken from the corpus or the quiz pool.
Pure: no Django import."""

DEMO_FLOW = {
    "consent": {
        "version": 1,
        "information": (
            "## About this study\n\n"
            "We are building a dataset of emotions and intents in film dialogues. You will read short "
            "dialogues from movie subtitles and choose the label that fits the **last turn** best.\n\n"
            "- It takes about 20 minutes per HIT and is paid as the study page says.\n"
            "- We store your answers, the time you spent per screen and your platform id, never your name.\n"
            "- You may stop at any time; answers you did not submit are not used.\n\n"
            "Questions: contact the research team through the platform's messages."
        ),
        "statement": "I have read the information above, I am 18 or older, and I agree to take part.",
    },
    "instructions": (
        "Read the whole dialogue, then label **only its last turn**: the emotion it shows, or the "
        "intent of the reply.\n\n"
        "1. Choose one of the three suggestions when one fits.\n"
        "2. If none fits, use **Other** to search every label, or type your own.\n"
        "3. Some screens are check questions with a known answer: they decide the bonus."
    ),
    "practice": {
        "pass_mark": 2,
        "retries": 1,
        "items": [
            {
                "turns": [["A", "I got the job!"], ["B", "After all those interviews? That's wonderful news!"]],
                "choices": ["Sad", "Joyful", "Angry"],
                "answer": "Joyful",
                "explanation": "B celebrates A's good news: the last turn is happy for them.",
            },
            {
                "turns": [
                    ["A", "The dog didn't come home last night."],
                    ["B", "Oh no. I'm so sorry, I know how much he means to you."],
                ],
                "choices": ["Questioning", "Joyful", "Consoling"],
                "answer": "Consoling",
                "explanation": "B answers bad news with comfort: a consoling intent, not a question or joy.",
            },
            {
                "turns": [["A", "Someone scratched my car again."], ["B", "Again? This is the third time this month!"]],
                "choices": ["Content", "Annoyed", "Grateful"],
                "answer": "Annoyed",
                "explanation": '"Again?" and "the third time" show irritation at something repeated.',
            },
        ],
    },
    "survey": [
        {"key": "difficulty", "kind": "scale", "question": "How hard was it to choose a label?"},
        {
            "key": "clarity",
            "kind": "choice",
            "question": "Were the labels clear to you?",
            "choices": ["Clear", "Mostly clear", "Often unclear"],
        },
        {"key": "comments", "kind": "text", "question": "Anything else you want to tell us?"},
    ],
    "translations": {
        "ar": {
            "consent": {
                "information": (
                    "## عن هذه الدراسة\n\n"
                    "نبني مجموعة بيانات للمشاعر والنوايا في حوارات الأفلام. ستقرأ حوارات قصيرة من ترجمات "
                    "الأفلام وتختار التسمية الأنسب **للجملة الأخيرة**.\n\n"
                    "- نحفظ إجاباتك والوقت الذي قضيته في كل شاشة ومعرّفك على المنصة، ولا نحفظ اسمك أبدًا.\n"
                    "- يمكنك التوقف في أي وقت؛ الإجابات التي لم ترسلها لا تُستخدم."
                ),
                "statement": "قرأت المعلومات أعلاه، وعمري 18 عامًا أو أكثر، وأوافق على المشاركة.",
            },
            "instructions": (
                "اقرأ الحوار كله، ثم سمِّ **الجملة الأخيرة فقط**: الشعور الذي تُظهره أو نية الرد.\n\n"
                "1. اختر أحد الاقتراحات الثلاثة إن كان مناسبًا.\n"
                "2. إن لم يناسب أي منها، استخدم **أخرى** للبحث في كل التسميات أو اكتب تسميتك."
            ),
            "survey": {
                "difficulty": {"question": "ما مدى صعوبة اختيار التسمية؟"},
                "clarity": {
                    "question": "هل كانت التسميات واضحة لك؟",
                    "choices": ["واضحة", "واضحة غالبًا", "غير واضحة غالبًا"],
                },
                "comments": {"question": "هل هناك شيء آخر تود إخبارنا به؟"},
            },
        }
    },
}
