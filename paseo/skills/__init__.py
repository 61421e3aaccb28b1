"""Paseo's orchestration skills: shipped as package data, installed by
:class:`~paseo.skills.service.SkillsService`, served as ``skills.*`` by :mod:`paseo.skills.rpc`.
"""
