"""Models as raters of a campaign's items: a chat model behind an OpenAI-compatible endpoint
(`endpoint`, the one module that calls it), or a model version of ours through its predictions
(`rate`, the one writer of RaterAnswer rows). The prompt is pure (`prompt`)."""
