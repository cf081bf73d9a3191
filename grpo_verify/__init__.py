"""grpo-verify: a verification suite for the mathematics of Group Relative Policy Optimization."""

__version__ = "0.1.0"
