"""The figures of Sutton & Barto (2018), one folder per chapter."""
