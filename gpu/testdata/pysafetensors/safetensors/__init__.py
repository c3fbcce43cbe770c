"""A stand-in for the safetensors package, for this repository's tests on
machines that have PyTorch but not safetensors (gpu's TestRefcheckPy puts
it on PYTHONPATH); the GPU machine has the real one."""
