"""Statistics: one room for a practice's figures and its benchmarks beside the registry.

* :mod:`.counts`: the counts kept per practice, birth year and group, and per practice and
  day received, as records change (written in the same transaction as the records), their
  recount and their rebuild;
* :mod:`.submissions`: what each practice sent, kept per day as ingestions finish, its
  recount and its rebuild (the registry office's console reads both);
* :mod:`.benchmarks`: the pure rules of what a practice may see of the registry (suppression);
* :mod:`.selectors`: the figures and benchmarks read from the kept counts;
* :mod:`.charts` and :mod:`.benchmark_charts`: the figures as HTML bars for the page;
* :mod:`.views`: the page, its JSON and its CSV (``/settings/statistics/``).
"""
