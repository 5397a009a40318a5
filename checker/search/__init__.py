"""The breadth-first search every engine runs: one driver (``driver.py``) over a level source
(an engine's way of expanding a level), one stop rule (``stop.py``) and observers (``observe.py``)."""
