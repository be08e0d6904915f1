"""BotsTalk: skill agents that talk, a moderator that filters (`agents`), the files they read
(`files`), agents that speak from the corpus's pairs (`corpus`), the moderator's NLI (`nli`) and
how well consecutive turns hang together (`coherence`). Pure: no Django."""
