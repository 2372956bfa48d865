"""How a question becomes a search plan: the rules planner and the model planner."""
