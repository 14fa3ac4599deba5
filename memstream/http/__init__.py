"""``memstream serve``: memstream over HTTP, so a service in any language can write and recall.

Writes become events on ``memory.events`` (the same :class:`memstream.MemoryPublisher` the
Python services use), answered once the broker has acknowledged them; reads go through
:class:`projections.reader.MemoryReader`. The API holds no state in its processes beyond
caches and per-process rate limits (Idempotency-Key records live in PostgreSQL:
``idempotency``), so any number of replicas can run behind one Service.

Layout: ``app`` (the routes: a map), ``auth`` (bearer tokens, tenants, scopes),
``idempotency`` (the Idempotency-Key header and its store), ``limits`` (per-token rate
limits), ``middleware`` (what runs before a route: sizes, auth, limits, metrics), ``models``
(request and response bodies: the OpenAPI document), ``problems`` (RFC 9457 errors),
``publishing`` (acknowledged writes), ``readers`` (the read side), ``server`` (the process).
"""
