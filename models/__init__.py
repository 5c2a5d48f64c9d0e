"""DocRE models, EVRT training and prediction (the [train] extra), and the in-context-learning client."""
