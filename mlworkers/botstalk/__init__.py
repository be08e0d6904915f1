"""The BotsTalk jobs (mlworkers.ml.botstalk), in `runs`: the skill classifier and the moderator's
NLI trained, dialogues generated into the corpus, turns labeled with their skill."""
