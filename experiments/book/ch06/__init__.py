"""Chapter 6's figures."""
