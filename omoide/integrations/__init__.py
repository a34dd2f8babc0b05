"""Omoide inside agent frameworks: ``langgraph`` (a ``BaseStore``), ``openai_agents`` (function
tools) and ``llamaindex`` (a memory block). Each module imports its framework, an optional
extra (``pip install 'omoide[langgraph]'``, ``[agents]``, ``[llamaindex]``); importing this
package imports none of them."""
