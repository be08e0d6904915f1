"""The ML app's pure core: models, their training and inference, over plain data (no Django, no
database, no job). One package per capability, each importing only the shared modules here and
the capabilities listed below it:

    loading.py    the one module that loads models (tokenizers, encoders, the torch device)
    metrics.py    classification metrics;  memory.py  peak memory of a block of work
    expansion/    sentence embeddings, similarity search, the expansion threshold's calibration
    classifier/   the dialogue classifier, its training and batched inference, precision and int8;
                  the weak labeler, the suggester, calibration
    generation/   the Table 7 dialogue model, beam search and its metrics
    botstalk/     BotsTalk's agents, their files, the corpus agents, NLI and coherence
    rounds/       the self-labeling rounds (Table 5) and the fastText baseline

The jobs that run them live in mlworkers/, grouped the same way (mlworkers/classifier/, ...).
"""
