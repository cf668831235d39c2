"""Built-in agents: a random agent over the action space, and a scripted element-aware agent for
common MiniWoB++ instructions."""

from hud_gym.agents.base import Agent
from hud_gym.agents.miniwob_scripted import MiniWoBScriptedAgent
from hud_gym.agents.random_agent import RandomAgent

__all__ = ["Agent", "MiniWoBScriptedAgent", "RandomAgent"]
