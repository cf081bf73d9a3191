"""``python -m grpo_verify.empirical``: measured rank structure of GRPO gradients on real models.

Modules: config (every option), data (GSM8K, arith), reward (math-verify), models (presets and
loading), sampling, measure (K, spectra, rank metrics, controls), train (GRPO steps), store
(atomic and append-only files), report (tables, plots); ``__main__`` runs the pipeline.
"""
