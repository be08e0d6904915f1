"""Response generation (the EDOS paper's Table 7): the encoder-decoder dialogue model
(`response_model`), beam search with n-gram blocking (`decoding`) and the metrics of generated
responses (`metrics`: perplexity, Distinct-n, SES). Pure: torch and tokenizers, no Django."""
