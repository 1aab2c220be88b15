"""Chapter 1's figures."""
