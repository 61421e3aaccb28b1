"""The scripts room: ``paseo.json`` scripts run in a workspace and supervised services."""
