"""A participant's study, start to finish: consent -> instructions -> practice (feedback, retry)
-> [qualification] -> work -> exit survey -> done, each step optional per campaign.

- `config`: the flow as data (Campaign.study_flow), checked once; which step is next; practice
  scoring; survey answers; the funnel. Pure.
- `texts`: which texts a participant is shown: the researcher's version in their language (the
  campaign's texts, label names and descriptions), else the campaign's own. Pure.
- `markdown`: a researcher's Markdown rendered safely. Pure.
- `progress`: the one writer of the steps reached, the consent decision (audited), practice
  answers and the exit survey; `cleared` is the claim's check.
- `views`, `urls`: the participant's pages of the flow (each names its step in data-step).
- `report`: the funnel and the survey for the study report and the exports.
See docs/crowd/study-flow.md.
"""
