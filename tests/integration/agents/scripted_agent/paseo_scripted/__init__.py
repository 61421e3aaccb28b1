"""A provider of the agent manager's tests: a real provider around a tiny scripted program."""
