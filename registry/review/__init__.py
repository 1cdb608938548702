"""The duplicate review, one room: its admin (admin.py), the side-by-side comparison
(comparison.py), the decisions (services.py: keep, void, merge) and the reads they need
(selectors.py). docs/review-and-statistics.md tells the story.
"""
