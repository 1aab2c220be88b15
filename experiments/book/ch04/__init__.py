"""Chapter 4's figures."""
