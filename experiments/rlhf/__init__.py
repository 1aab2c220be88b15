"""The RLHF lab's experiments: learners on the token MDP against its exact KL-regularised
optimum."""
