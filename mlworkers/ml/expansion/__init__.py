"""Sentence embeddings and similarity, for SBERT expansion: turn embeddings kept in files and the
decaying dialogue embedding (`embeddings`), the exact threshold search (`similarity`), and how far
the threshold can drop for an encoder (`calibration`). Pure: numpy (and faiss), no Django."""
