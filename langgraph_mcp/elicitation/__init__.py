"""Elicitation: the interrupt payloads' questions, answer validation, and the round drivers for both eras."""
