"""The LLM path: extraction, merge judgement, summaries and embeddings through `openai`.

Importing this package does not import `openai` (an optional extra): only
`engram.llm.context` and the adapters do, and only when a model is configured.
"""
