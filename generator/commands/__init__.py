"""One module per verb; each exposes one function of the parsed options."""
