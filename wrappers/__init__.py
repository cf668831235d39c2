"""Wrappers over hud-gym environments: vector envs, GRPO rollouts, stable-baselines3 and Ray
adapters, observation wrappers."""
