"""Search: the documents the original indexes, and the engines that rank them."""
