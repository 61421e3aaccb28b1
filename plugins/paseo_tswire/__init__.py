"""The TypeScript Paseo wire protocol beside ``/ws`` JSON-RPC: the TypeScript CLI, web and mobile
apps drive this daemon unchanged (see docs/ts-clients.md)."""
