"""Chapter 3's figures."""
