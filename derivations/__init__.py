"""The derivations, one module per claim family (installed as ``grpo_verify.derivations``)."""
