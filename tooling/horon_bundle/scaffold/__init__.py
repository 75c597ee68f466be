"""`horon-bundle new`: a plugin workspace rendered from the templates shipped in the package."""
