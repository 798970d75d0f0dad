"""What a person is asked and may answer, pure: one module per interrupt kind and the registry over them.

Each kind has its payload (the TypedDicts in :mod:`langgraph_mcp.payloads`), the model that checks its answer
(which gives LangGraph's ``response_schema`` and the JSON Schema clients see), and its Agent Chat UI card:
``approval`` and ``decisions`` (``mcp_approval``), ``elicitation`` and ``answers`` (``mcp_elicitation``, form and
URL), ``sign_in`` (``mcp_authorization``), ``sampling`` (``mcp_sampling``). ``resume`` reads the registry of kinds
(``pending_interrupts``, ``resume_command``); ``agent_chat_ui`` holds the mode a graph asks in (``QuestionShapes``:
``PLAIN`` or ``AGENT_CHAT_UI``, chosen once) and the elicitation cards, ``cards`` what every card shares.
"""
