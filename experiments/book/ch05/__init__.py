"""Chapter 5's figures."""
