"""The registry office's seat: the console of every practice, the silent hospitals, the
scorecards and the monthly feedback mail (docs/registry-office.md).

It sits above ingestion in the layers: it reads what the registry keeps (counts per practice
and day, records), the keys' status and the pipeline's state, and nothing imports it but
``config``."""
