"""Chapter 2's figures."""
