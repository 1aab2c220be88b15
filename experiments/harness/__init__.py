"""The harness that runs the experiments: the registry of experiments, running one, the
command line, storage, executors, settings, checks, the gallery and the figures' style."""
