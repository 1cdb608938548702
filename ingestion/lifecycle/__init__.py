"""The record lifecycle of spec section 3, applied to the registry.

``applying`` (the service the pipeline calls: decide, then store, one record at a time when
the database refuses a value), ``rows`` (the records a chunk names, read once), ``deciding``
(the lifecycle table replayed in memory, in entry order), ``entries`` (the receipt entries,
as types), ``storing`` (the bulk writes and the kept counts), ``preview`` (``Bundle/$validate``:
deciding without storing, for the web).
"""
