"""The exploration lab's experiments."""
