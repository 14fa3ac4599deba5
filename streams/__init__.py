"""The Faust application: topics, tables and agents around the pure engine in ``streams.engine``."""
