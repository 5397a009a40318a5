"""The interactive explorer (``hwcheck explore``): a session over a spec and a local web server."""
