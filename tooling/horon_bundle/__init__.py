"""horon-bundle: build, check, sign, publish and audit native plugin bundles."""

__version__ = "0.1.0"
