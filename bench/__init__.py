"""paneboard's benchmark harness: `python -m bench [--quick] [--only NAME…] [--out DIR]`."""
