"""Chapter 7's figures."""
