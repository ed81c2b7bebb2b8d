"""Package data: Jinja2 templates, each named after the file it emits."""
