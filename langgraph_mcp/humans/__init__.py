"""What a human is asked and may answer, with no I/O: policy, decisions, forms, answers, resume."""
