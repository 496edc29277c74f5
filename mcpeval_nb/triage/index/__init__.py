"""What builds ``<root>/index.db`` (SPEC 12.1): the findings half of ``triage`` reads it.

``build`` (``build_index``, the full build, the index lock) -> ``refresh`` (the incremental refresh) ->
``ingest`` (journal suffixes through the Arrow loader) -> ``encode`` (Arrow batches as integer rows),
``events`` (event ids as 64-bit keys), ``windows`` (failure windows), ``links`` (annotation links and
group tails), ``bulk`` (a full build's ADBC writer), ``sources`` (the journals and the prefix proof);
``database`` is the layout and how it is opened, ``result`` what a run did.  Nothing here imports the
findings half except ``rows``, the declaration of the ``issues`` row.  Import the modules themselves:
this package imports nothing, so a reader of ``database`` does not load the build.
"""
