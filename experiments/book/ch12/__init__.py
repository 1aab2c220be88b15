"""Chapter 12's figures."""
