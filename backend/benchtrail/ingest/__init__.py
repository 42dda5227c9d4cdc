"""Result-file ingestion: parsers (one per format), format detection, and cell/series building."""
