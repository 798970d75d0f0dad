"""The one judgement of a tool call, and what hangs off it: who owns the call, the remembered decisions, the
decision record (:mod:`.judge`, :mod:`.owners`, :mod:`.memory`, :mod:`.audit`).

Between ``servers/`` (which it asks for tools, identities and the approval key) and ``graph/`` (whose gate, tool
node and middleware are thin adapters over it)."""
