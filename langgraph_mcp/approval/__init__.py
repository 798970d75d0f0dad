"""Approval: the policy that gives each tool call a verdict, and the gate subgraph that asks humans."""
