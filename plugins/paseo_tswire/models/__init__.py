"""Pydantic models of the TypeScript protocol's messages this transport handles, written from
the client's zod schemas (``packages/server/src/shared/messages.ts``): outbound shapes forbid
unknown keys, because the clients drop a frame that fails their schema without a word."""
