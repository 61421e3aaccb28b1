"""The built-in ``opencode`` agent provider (see :mod:`paseo_opencode.provider`)."""
