"""The policy language, pure: what a call needs (allow, ask, deny) and what a signed decision binds to.

No I/O: the policy model and its precedence tiers, rules and their conditions, policy files and their
self-tests, verdicts, and the binding a decision is signed over. The judgement that uses them (with the
servers, the store and the graph) is :mod:`langgraph_mcp.approval`.
"""
