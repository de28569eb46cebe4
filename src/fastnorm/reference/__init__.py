"""The float64 NumPy reference: forward and hand-written backward of every op. Imports NumPy only."""
