"""The gateway as tools for PMFlow's agents: an MCP server exposing `external_search` (one
question through the stage cores, in process or through the Kafka workers) and `route_prior`
(what a tenant's similar past questions suggest about routing a new one)."""
