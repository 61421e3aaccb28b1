"""Test kits for Paseo plugin authors and Paseo's own test suite.

Modules here are imported explicitly (``from paseo.testing.store_conformance import ...``); this
package imports nothing so that importing one kit never pulls in another's dependencies.
``paseo.testing.fake_model`` is a scripted fake model server for running real agent programs.
"""
