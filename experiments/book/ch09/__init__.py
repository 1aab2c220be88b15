"""Chapter 9's figures."""
