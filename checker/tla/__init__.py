"""The TLA+ front end: modules and cfgs parsed, resolved and evaluated (docs/tla.md)."""
