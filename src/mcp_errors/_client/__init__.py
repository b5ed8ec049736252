"""The client side: reading results, the recovery policy, partial results."""
