"""Per-notebook figures, one module per notebook (p22, p27, p29, practice), drawn with helpers.plots' vocabulary."""
