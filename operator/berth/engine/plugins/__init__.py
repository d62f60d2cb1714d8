"""In-tree plugins, one module each. They import the framework and the model, never each other."""
