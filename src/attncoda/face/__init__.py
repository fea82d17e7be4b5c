"""The book's face: the command line, the papermill runner, the book build, figures and results files."""
