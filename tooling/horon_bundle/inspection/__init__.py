"""`horon-bundle inspect`: what a bundle holds, shown from its verified facts."""
