"""What a text's language is and how the models see it: below the store and the embedders.

:mod:`.analysis` detects a text's language (German or English) and turns it into the lexical
side's terms (casefold, stop words, stems). :mod:`.baseline` is how a question's raw cosine
becomes the dense side of its score: the models' per-language background levels
(``background_means.json``) and the :class:`~.baseline.Calibration` an embedder may give a
question. The store (:mod:`langgraph_episodic.chroma`) and the two-language embedder
(:mod:`langgraph_episodic.bilingual`) both use these; this package imports neither.
"""
