"""The staff's pages of the corpus: browsing (`corpus.py`) and the analysis and export pages
(`analysis.py`), with their URLs (`urls.py`, which takes in `analysis_urls.py`)."""
