"""The claims ledger: ``python -m grpo_verify.report`` (see ``__main__``); verdict rules in ``rules``."""
