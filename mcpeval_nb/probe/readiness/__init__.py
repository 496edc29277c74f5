"""Readiness under ``mcpeval-standard/2`` (SPEC 8.4, 9.2-9.3): the standard battery and its score.

One concept per module, lowest first (each imports only those above it, plus the probe engine's context,
cases and kinds; nothing here is imported at package import time):

* ``labels``: the standard, areas and weights, check ids, readiness reasons and their hints;
* ``model``: ``Readiness`` and its parts (``to_json``), the badge, the measurement profile;
* ``parse``: ``parse_readiness`` for saved documents;
* ``text``: the readiness lines of text and markdown reports;
* ``observations``: what the battery keeps (labels, flags, counts);
* ``score``: ``score_readiness``, the pure function from observations to ``Readiness``;
* ``schema_tools`` and ``synth``: bounded conformance tests and input synthesis from untrusted schemas;
* ``checks``: the battery's shared cases and protocol checks;
* ``battery``: ``run_battery`` and ``score_server``.
"""
