"""One module per result-file format; each exposes `parse(path, options) -> ParsedFile`."""
