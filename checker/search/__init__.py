"""The breadth-first search every engine runs: one driver (``driver.py``) over a level source
(an engine's way of expanding a level) and one stop rule (``stop.py``); ``exploration.py`` is
what a search reports."""
