def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs PyTorch with a CUDA GPU (skipped without)")
