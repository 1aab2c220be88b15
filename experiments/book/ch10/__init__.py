"""Chapter 10's figures."""
