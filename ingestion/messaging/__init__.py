"""The message that wakes a worker for an ingestion, from the web's commit to the broker.

``publishing`` (the message, sent by the task's name), ``singles_flag`` (one message for a
practice's waiting singles, not one each), ``gathering`` (a single's message a moment after
its commit), ``queue_tail`` (what still waits in the broker's queue, for the recovery and
for a batch's turns).
"""
