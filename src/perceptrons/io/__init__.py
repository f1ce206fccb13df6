"""Reading data files, streaming them, and the model files."""
