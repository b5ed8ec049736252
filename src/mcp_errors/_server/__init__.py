"""The server side: exceptions into results, install on each server kind, idempotency replay."""
