"""Chapter 13's figures."""
