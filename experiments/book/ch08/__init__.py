"""Chapter 8's figures."""
