"""The read side: SQL migrations, the projector that applies the ledger, and read queries."""
