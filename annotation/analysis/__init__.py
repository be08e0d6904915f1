"""Analysis of the labeled corpus: pure functions over iterables of plain records.

Every module here except `queries` is free of Django, so the statistics, the KL divergence, the
Sankey flows, the gap histogram and the example selection are tested on hand-made records.
`queries` is the thin shell that feeds them from the database with streamed `values_list` rows.
"""
