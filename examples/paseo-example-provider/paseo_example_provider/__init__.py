"""An example third-party Paseo agent provider, written against ``paseo-hookspecs`` alone.

- :mod:`paseo_example_provider.plugin`: the hook that registers the provider (the entry point);
- :mod:`paseo_example_provider.provider`: the provider (models, modes, availability, derive);
- :mod:`paseo_example_provider.session`: one session, the agent's protocol mapped to events;
- :mod:`paseo_example_provider.agent`: the agent program the sessions drive.
"""
