"""The study report's models-as-raters section."""


def model_rater_figures(campaign, answers) -> list[dict]:
    return []
