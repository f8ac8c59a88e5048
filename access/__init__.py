"""The access layer: HTTP API (`http_app`), MCP server (`mcp_server`) and Python client (`client`).

All three doors share the wire models in `models` and the use cases in
`service` / `cards`, which run on a `backend.MemoryBackend` (the embedded
runtime today). Importing this package pulls in no web framework: the client
needs httpx only, the servers need the `serve` extra.
"""
