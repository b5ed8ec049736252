"""What both sides of the protocol speak: the contract's vocabulary and how it is written."""
