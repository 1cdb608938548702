"""Processing an ingestion: claim it, apply its chunks one transaction each, finish it.

Exactly once, whatever happens to the worker:

* A worker *claims* an ingestion by taking a lease (``lease_expires_at``); another worker may
  claim it only once the lease has run out, which is how a killed worker's ingestion is
  picked up again (by redelivery or by the recovery).
* Each chunk is applied in one transaction that also writes the chunk's receipt entries and
  deletes the staged chunk. A chunk is therefore either fully applied and gone, or not
  applied and still staged: progress is committed with the records it describes.
* The chunk transaction locks the ingestion row, so chunks apply in order even if two
  workers hold the same ingestion, and the practice's advisory lock, so two ingestions of
  one practice touching the same chart or fingerprint produce the outcome of a serial order.

The rooms, in the order a claim goes through them: ``process`` (what the task calls: one
attempt, its retry or its failure), ``claims`` (the lease), ``chunks`` (the chunk loop),
``completion`` (progress, completion, failure), ``recovery`` (what a lost message or a dead
worker leaves). Two a reader can skip: ``singles`` (a practice's waiting singles applied
together, an optimisation) and ``isolation`` (a chunk that keeps killing the worker).
"""
