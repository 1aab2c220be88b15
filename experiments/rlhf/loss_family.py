"""DPO's loss family as the RLHF experiments train it: each loss by the name the tables
give it, with the options :func:`~tabular.rlhf.dpo` and :func:`~tabular.rlhf.loss_optimum`
take (shared by the ``loss_optima`` experiment and the leaderboard)."""

#: The losses, by the name the table gives them, and their options.
LOSSES = {
    "DPO": {"loss": "sigmoid"}, "cDPO (eps 0.1)": {"loss": "sigmoid", "label_smoothing": 0.1},
    "rDPO (eps 0.1)": {"loss": "robust", "label_smoothing": 0.1}, "IPO": {"loss": "ipo"},
    "IPO per token": {"loss": "ipo", "average_log_prob": True}, "hinge": {"loss": "hinge"},
    "EXO": {"loss": "exo_pair"}, "NCA": {"loss": "nca_pair"}, "BCO": {"loss": "bco_pair"},
    "SPPO": {"loss": "sppo_hard"}, "APO-zero": {"loss": "apo_zero"},
    "APO-down": {"loss": "apo_down"}, "DiscoPOP": {"loss": "discopop"},
    "sigmoid_norm": {"loss": "sigmoid_norm"}, "DPO + SFT": {"loss": ("sigmoid", "sft")},
    "SimPO": {"loss": "simpo"}, "CPO": {"loss": "cpo"}, "ORPO": {"loss": "orpo"},
    "AOT": {"loss": "aot"}, "AOT unpaired": {"loss": "aot_unpaired"},
}
#: The quadratic losses take smaller steps (their curvature grows with the gap).
QUADRATIC = ("IPO", "IPO per token", "SPPO")
