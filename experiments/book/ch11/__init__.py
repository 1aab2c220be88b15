"""Chapter 11's figures."""
