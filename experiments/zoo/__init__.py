"""The whole zoo on one environment: every learner against the exact optimum, and its speed."""
